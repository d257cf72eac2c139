package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
)

// maxToken bounds what is read of standard input: a ServiceAccount token is about 1 KiB.
const maxToken = 64 << 10

func installCredentialCommand(nf *nodeFlags) *cobra.Command {
	var server, caFile, kubelet string
	var skipCheck bool
	cmd := &cobra.Command{
		Use:   "install-credential node|handover",
		Short: "Write this node's API credential (a kubeconfig) from a token read on standard input",
		Long: "Reads a token on standard input, as oc create token prints it, and writes the kubeconfig the layer's " +
			"services read: `node` to cluster.yaml's secretsFromAPI.kubeconfigFile (this node's Secrets, its token " +
			"renewal, the out-of-service taint), `handover` to " + handover.DefaultKubeconfig + ". The API's address " +
			"and CA bundle are the kubelet's (" + nodetoken.KubeletKubeconfig + ": api-int, as MCO writes it), unless " +
			"given. Before anything is written, the token must be the right account's and not expired: node " +
			clusterconfig.SecretsNamespace + "/" + clusterconfig.NodeServiceAccount("<this node>") + ", handover " +
			handover.ServiceAccountNamespace + "/" + handover.ServiceAccountName + ", by its claims and by the API's " +
			"answer (a SelfSubjectReview; --skip-check writes it without asking). It runs as root and writes a file " +
			"of mode 0600 (a missing folder is made 0700); the token is never printed. The token goes through a pipe, " +
			"never on a command line: run without one, it waits for standard input to end.",
		Example: "  oc create token tnf-node-master-0 -n " + clusterconfig.SecretsNamespace + " --duration=720h | ssh core@master-0 sudo tnfctl install-credential node\n" +
			"  oc create token " + handover.ServiceAccountName + " -n " + handover.ServiceAccountNamespace + " --duration=24h | ssh core@master-0 sudo tnfctl install-credential handover",
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"node", "handover"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if os.Geteuid() != 0 {
				return errors.New("install-credential runs as root: the layer's services refuse a kubeconfig root does not own")
			}
			in := nodetoken.Install{Server: server, Kubelet: kubelet, Check: !skipCheck}
			if args[0] == "node" {
				nc, err := nf.load()
				if err != nil {
					return err
				}
				if nc.Config.SecretsFromAPI == nil {
					return fmt.Errorf("%s has no secretsFromAPI: this node's secrets come with its configuration, it needs no credential", nf.config)
				}
				in.Path = nc.Config.SecretsFromAPI.KubeconfigFile
				in.For = nodetoken.Account{Namespace: clusterconfig.SecretsNamespace, Name: clusterconfig.NodeServiceAccount(nc.Self.Name)}
			} else {
				in.Path = handover.DefaultKubeconfig
				in.For = nodetoken.Account{Namespace: handover.ServiceAccountNamespace, Name: handover.ServiceAccountName}
			}
			if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				return fmt.Errorf("install-credential reads the token on standard input, from a host with oc: oc create token %s -n %s | ssh core@<node> sudo tnfctl install-credential %s",
					in.For.Name, in.For.Namespace, args[0])
			}
			token, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxToken+1))
			if err != nil {
				return fmt.Errorf("standard input: %w", err)
			}
			if len(token) > maxToken {
				return fmt.Errorf("standard input: more than %d bytes, not a token", maxToken)
			}
			in.Token = string(token)
			if caFile != "" {
				if in.CAData, err = os.ReadFile(caFile); err != nil {
					return fmt.Errorf("--certificate-authority: %w", err)
				}
				if len(in.CAData) == 0 {
					return fmt.Errorf("--certificate-authority: %s is empty", caFile)
				}
			}
			tok, err := in.Write(cmd.Context(), time.Now())
			if err != nil {
				return err
			}
			valid := "a token that never expires: the node cannot renew it"
			if tok.Bound {
				valid = "valid until " + tok.Expires.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "install-credential: %s: %s's token, %s\n", in.Path, in.For.Username(), valid)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the API's URL (default: the kubelet's kubeconfig's)")
	cmd.Flags().StringVar(&caFile, "certificate-authority", "", "a PEM file of the API's CA bundle (default: the kubelet's kubeconfig's)")
	cmd.Flags().StringVar(&kubelet, "kubelet-kubeconfig", nodetoken.KubeletKubeconfig, "the kubeconfig the API's address and CA bundle are read from")
	cmd.Flags().BoolVar(&skipCheck, "skip-check", false, "write the credential without asking the API who the token is")
	return cmd
}
