package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/output"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencecheck"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/identity"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func fenceCheckCommand(nf *nodeFlags) *cobra.Command {
	var (
		target, device, agent, format string
		cf                            credentialFlags
		timeout                       time.Duration
		basicAuth                     bool
	)
	cmd := &cobra.Command{
		Use:   "fence-check",
		Short: "Verify BMC credentials through the Redfish API and with the fence agent, as Pacemaker will use them",
		Example: `  tnfctl fence-check --target master-1
  tnfctl fence-check --address redfish+https://192.0.2.21/redfish/v1/Systems/1 \
      --username admin --password-file /etc/tnf/secrets/master-1.password`,
		Long: "Reads the system through the BMC's Redfish API, then runs the second fencing level's agent " +
			"(fence_tnf_redfish) --action status with the options on standard input, as Pacemaker's fencer does. Both talk " +
			"only to a BMC whose certificate is checked (pinned, or verified); for one that is neither, the redfish line says " +
			"so and gives the SHA-256 of the certificate the BMC serves, read without sending any credential. Prints one " +
			"line per check; exits 1 if any check fails. The password is read from a file and never " +
			"appears in any command line or output. --target NODE checks that node's BMC as the node " +
			"configuration names it (what the cluster's fence devices use) and, once both nodes have published their " +
			"machine's identity (tnfctl setup does), also whether the BMC's system is NODE's machine (its UUID or a NIC's " +
			"MAC address), and that it does not say Off for a live Corosync member. --device ID checks the credential a " +
			"fence device in the CIB holds, with the device's own agent (on a guest node, the cluster-etcd-operator's " +
			"<node>_redfish): a device that runs without checking the certificate (ssl_insecure) gets no password, and the " +
			"redfish line says whether this node's CAs verify the certificate its BMC serves. Otherwise --address, " +
			"--username and --password-file say what to check.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cred bmc.Credential
			fo := fencecheck.Options{Timeout: timeout, Agent: agent, BasicAuth: basicAuth}
			switch {
			case device != "":
				name, params, err := pcmk.Tools{}.FenceDeviceParams(cmd.Context(), device)
				if err != nil {
					return fmt.Errorf("--device: %w", err)
				}
				if cred, err = fencerun.DeviceCredential(device, params); err != nil {
					return fmt.Errorf("--device: %w", err)
				}
				if !cmd.Flags().Changed("fence-agent") {
					fo.Agent = filepath.Join(fencerun.AgentDir, name) // where Pacemaker's fencer finds it
				}
			case target != "":
				nc, err := clusterconfig.LoadNode(nf.config, target)
				if err != nil {
					return fmt.Errorf("--target: %w", err)
				}
				if cred, err = nc.Self.Credential(); err != nil {
					return fmt.Errorf("--target %s: %w", target, err)
				}
				fo.Target, fo.Machines, fo.Member = identityOf(cmd.Context(), target, nc.Peer.Name)
				fo.UnverifiedIdentity = nc.Self.BMC.UnverifiedIdentity
			default:
				var err error
				if cred, err = cf.credential(); err != nil {
					return err
				}
			}
			results := fencecheck.Check(cmd.Context(), cred, fo)
			err := output.Print(cmd.OutOrStdout(), format, results, func(w io.Writer) {
				for _, r := range results {
					fmt.Fprintln(w, r)
				}
			})
			if err != nil {
				return err
			}
			if slices.ContainsFunc(results, func(r fencecheck.Result) bool { return !r.OK }) {
				return errors.New("fence-check failed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "target", "", "check this node's BMC as the node configuration (--config) names it")
	f.StringVar(&cf.address, "address", "", "BMC address: redfish+https://host[:port]/redfish/v1/Systems/<id>")
	f.StringVar(&cf.username, "username", "", "BMC user")
	f.StringVar(&cf.passwordFile, "password-file", "", "file holding the BMC password")
	f.StringVar(&cf.verification, "certificate-verification", "Enabled", "Enabled or Disabled, as in the install-config")
	f.StringVar(&cf.caFile, "ca-file", "", "CA bundle of the BMC's certificate (default: the system's)")
	f.StringVar(&cf.pin, "certificate-sha256", "", "the BMC certificate's SHA-256 (colons allowed): only that certificate is accepted")
	f.BoolVar(&cf.insecure, "insecure-skip-certificate-check", false, "talk to a BMC whose certificate is neither verified nor pinned (a lab's)")
	f.StringVar(&agent, "fence-agent", fencerun.DefaultAgent, "the second fencing level's agent")
	f.DurationVar(&timeout, "timeout", 20*time.Second, "deadline of each check")
	f.BoolVar(&basicAuth, "basic-auth", false, "Basic auth instead of a Redfish session (for BMCs without sessions)")
	f.StringVar(&device, "device", "", "check the credential this fence device in the CIB holds (pcs stonith status names them)")
	cmd.MarkFlagsMutuallyExclusive("target", "address", "device")
	output.Flag(cmd.Flags(), &format)
	hide(cmd, "fence-agent")
	return cmd
}

// identityOf is what the identity check of target's BMC needs, from the running cluster: the
// nodes' published identities and whether target is a Corosync member. Without a cluster that
// answers (before setup), or before both nodes published theirs, there is no identity check:
// target is "" then.
func identityOf(ctx context.Context, target, other string) (string, map[string]identity.Identity, bool) {
	machines, ok, err := identity.Published(ctx, attrs.CRM{}, []string{target, other})
	if err != nil || !ok {
		return "", nil, false
	}
	m, err := pcmk.Tools{}.Members(ctx)
	return target, machines, err == nil && m.Nodes[target]
}

// credentialFlags name a BMC credential without a node configuration.
type credentialFlags struct {
	address, username, passwordFile, verification, caFile, pin string
	insecure                                                   bool
}

// credential is the credential the flags name; errors name the flag.
func (cf credentialFlags) credential() (bmc.Credential, error) {
	for _, f := range []struct{ flag, value string }{{"--address", cf.address}, {"--username", cf.username}, {"--password-file", cf.passwordFile}} {
		if f.value == "" {
			return bmc.Credential{}, fmt.Errorf("%s: missing (or give --target NODE)", f.flag)
		}
	}
	addr, err := bmc.ParseAddress("--address", cf.address)
	if err != nil {
		return bmc.Credential{}, err
	}
	data, err := os.ReadFile(cf.passwordFile)
	if err != nil {
		return bmc.Credential{}, fmt.Errorf("--password-file: %w", err)
	}
	cred := bmc.Credential{Address: addr, Username: cf.username, Password: strings.TrimRight(string(data), "\r\n"), CAFile: cf.caFile,
		InsecureSkipCertificateCheck: cf.insecure}
	if err := bmc.CheckPassword(cred.Password); err != nil {
		return bmc.Credential{}, fmt.Errorf("--password-file: the password %w", err)
	}
	switch cf.verification {
	case "Enabled":
		cred.VerifyCertificate = true
	case "Disabled":
	default:
		return bmc.Credential{}, fmt.Errorf("--certificate-verification: %q is neither Enabled nor Disabled", cf.verification)
	}
	if cf.pin != "" {
		if cred.PinSHA256, err = bmc.ParsePin(cf.pin); err != nil {
			return bmc.Credential{}, fmt.Errorf("--certificate-sha256: %w", err)
		}
	}
	return cred, nil
}
