package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/apisecrets"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func syncSecretsCommand(nf *nodeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync-secrets",
		Short: "Fetch this node's Secrets from the API into its root-only files, and apply a changed BMC password",
		Long: "Reads the Secrets cluster.yaml's secretsFromAPI names (each node's fencing-credentials Secret and the " +
			"Corosync key, in " + clusterconfig.SecretsNamespace + ") and replaces the files whose value changed. On a node " +
			"set up already, a change then starts tnf-reconfigure.service, which re-registers the fence devices with the new " +
			"password, without a reboot. A Corosync key other than the one the cluster runs with is refused. tnf-keys-sync.timer " +
			"runs it every 5 minutes. One line per file. First, the node's own credential takes the CA bundle of the kubelet's " +
			"kubeconfig (" + nodetoken.KubeletKubeconfig + ", which MCO rewrites when the API's signers rotate) where both name " +
			"the same server. Last, a bound token past half its lifetime is " +
			"replaced by a new one of the same lifetime (TokenRequest, with the token itself); a token that never expires " +
			"(a legacy token Secret's) is reported. With --kubeconfig, the Secrets are read with that credential, " +
			"and the node's own is left as it is (its CA bundle and its token).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := nf.loadConfig()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if cfg.SecretsFromAPI == nil {
				fmt.Fprintln(out, "sync-secrets: nothing to fetch: "+nf.config+" has no secretsFromAPI (the secrets come with the node configuration)")
				return nil
			}
			own := nf.kubeconfig == "" // the node's own credential, which sync-secrets keeps current
			if own {
				followCA(out, cfg.SecretsFromAPI.KubeconfigFile)
			}
			installedKey := nodesetup.AuthkeyPath
			if setup, _ := nodesetup.State(); setup == nodesetup.StateGuest {
				installedKey = "" // the operator's key: the layer's is never Corosync's here
			}
			files, changed, err := apisecrets.Sync(cmd.Context(), cfg, installedKey)
			// A refused key still lets a rotated password through (Keep writes the others).
			if err != nil && !errors.Is(err, apisecrets.ErrKeyChanged) {
				return fmt.Errorf("%s: %w", nf.config, err)
			}
			keyErr := err
			apisecrets.Report(files, changed, func(name, result string) { fmt.Fprintf(out, "sync-secrets: %s: %s\n", name, result) })
			if err := applyRotation(cmd, cfg, changed); err != nil {
				return err
			}
			if !own {
				return keyErr
			}
			self, err := nf.name()
			if err != nil {
				return err
			}
			if err := renewToken(cmd, cfg.SecretsFromAPI.KubeconfigFile, self); err != nil {
				return err
			}
			return keyErr
		},
	}
	kubeconfigFlag(cmd, nf)
	return cmd
}

// applyRotation starts tnf-reconfigure.service when a BMC password changed on a node set up
// already, or an earlier change has not reached the fence devices (its start failed, or the
// reconfiguration stopped before their restart): it re-registers them with the new one.
func applyRotation(cmd *cobra.Command, cfg clusterconfig.Config, changed []string) error {
	out := cmd.OutOrStdout()
	if _, err := os.Stat(nodesetup.Marker); err != nil {
		if apisecrets.PasswordChanged(cfg, changed) {
			fmt.Fprintln(out, "sync-secrets: setup has not completed here: it reads the files when it runs")
		}
		return nil
	}
	pending, err := nodesetup.RotationPending(cfg)
	if err != nil {
		return err
	}
	if !pending {
		return nil
	}
	if _, ok := nodesetup.DetectServices().(nodesetup.Systemd); !ok {
		fmt.Fprintln(out, "sync-secrets: no systemd: run tnfctl setup to apply the change")
		return nil
	}
	if _, err := (pcmk.Tools{}).Run(cmd.Context(), "systemctl", "start", "--no-block", "tnf-reconfigure.service"); err != nil {
		return err
	}
	fmt.Fprintln(out, "sync-secrets: tnf-reconfigure.service started: it applies the change")
	return nil
}

// followCA has the node's credential at path follow the kubelet's CA bundle, before anything
// reads the API with it: after a rotation of the API's signers the old bundle fails every read.
// A bundle not followed is said, not fatal: the one in use may still be good.
func followCA(out io.Writer, path string) {
	if followed, err := nodetoken.FollowCA(path, nodetoken.KubeletKubeconfig); err != nil {
		fmt.Fprintf(out, "sync-secrets: %s: the kubelet's CA bundle not followed: %v\n", path, err)
	} else if followed {
		fmt.Fprintf(out, "sync-secrets: %s: the API's CA bundle changed with the kubelet's (%s)\n", path, nodetoken.KubeletKubeconfig)
	}
}

// renewToken renews the node's bound token when half its lifetime has passed, and says how long
// the one in use is good for; self names the account a never-expiring token is to be replaced
// with.
func renewToken(cmd *cobra.Command, path, self string) error {
	out := cmd.OutOrStdout()
	r, err := nodetoken.Renew(cmd.Context(), path, time.Now())
	if err != nil {
		return err
	}
	switch {
	case !r.Before.Bound:
		fmt.Fprintf(out, "sync-secrets: %s: a token that never expires: replace it with a bound one the node renews "+
			"(oc create token %s -n %s --duration=720h | ssh core@%s sudo tnfctl install-credential node)\n",
			path, clusterconfig.NodeServiceAccount(self), clusterconfig.SecretsNamespace, self)
	case r.Renewed:
		fmt.Fprintf(out, "sync-secrets: %s: token renewed, valid until %s\n", path, r.After.Expires.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(out, "sync-secrets: %s: token valid until %s\n", path, r.Before.Expires.UTC().Format(time.RFC3339))
	}
	return nil
}
