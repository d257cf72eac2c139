// Command tnfctl is the node-side tool of a two-node cluster: first-boot setup, status, the
// admin's confirmation that the peer is down, the admin's acceptance of etcd data loss, the
// BMC-verified automatic unblock, BMC checks.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// nodeFlags are where the node configuration is and which node this is, and, for a command
// that calls the API, its --kubeconfig.
type nodeFlags struct {
	config, node, kubeconfig string
}

// name is this node's name: --node, else the host name (as the installer names nodes).
func (f nodeFlags) name() (string, error) {
	if f.node != "" {
		return f.node, nil
	}
	return os.Hostname()
}

// load reads cluster.yaml and returns it with this node and its peer, and --kubeconfig as its
// credential for the API where given.
func (f nodeFlags) load() (clusterconfig.NodeConfig, error) {
	nc, err := clusterconfig.LoadNode(f.config, f.node)
	if err == nil && f.kubeconfig != "" {
		nc.Config.UseKubeconfig(f.kubeconfig)
	}
	return nc, err
}

// loadConfig reads cluster.yaml, with --kubeconfig as its credential for the API where given.
func (f nodeFlags) loadConfig() (clusterconfig.Config, error) {
	cfg, err := clusterconfig.Load(f.config)
	if err == nil && f.kubeconfig != "" {
		cfg.UseKubeconfig(f.kubeconfig)
	}
	return cfg, err
}

// kubeconfigFlag gives a command that calls the API --kubeconfig, as oc's commands have it: a
// credential for this run instead of the node's own.
func kubeconfigFlag(cmd *cobra.Command, nf *nodeFlags) {
	cmd.Flags().StringVar(&nf.kubeconfig, "kubeconfig", "", "a credential for the API for this run (an administrator's, say), "+
		"instead of the node's own (cluster.yaml's secretsFromAPI.kubeconfigFile, default "+clusterconfig.NodeKubeconfig+")")
}

func main() {
	err := rootCommand().Execute()
	if err == nil {
		return
	}
	// cobra's own format; status's verdict has no message, only its code.
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(os.Stderr, "Error:", msg)
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		os.Exit(ec.ExitCode())
	}
	os.Exit(exitError)
}

// rootCommand is tnfctl with every subcommand: the binary runs it, the reference is generated
// from it and the documentation is checked against it.
func rootCommand() *cobra.Command {
	var nf nodeFlags
	root := &cobra.Command{
		Use:   "tnfctl",
		Short: "Two-node OpenShift with fencing: node-side tool",
		Long: "tnfctl sets a node of a two-node cluster up, shows its state, and is how an administrator lets a node " +
			"that is alone go on. It reads the node configuration (--config) and runs Corosync's and Pacemaker's own " +
			"tools; it needs root.\n\nExit codes, for scripts: 0 done (status: healthy); 1 an error: something " +
			"could not be read or done; 2 auto-unblock did not start this node, the peer's BMC did not prove it off; " +
			"3 refused: the action would be unsafe (the peer is a Corosync member, no older data to give up) or was " +
			"not confirmed; status only: 4 degraded, recovering or installer-etcd (serving without redundancy), 5 not " +
			"serving (inert, blocked, restoring, setup failed, Pacemaker or Corosync not answering), 6 failover off (an " +
			"administrator's setting keeps Pacemaker from recovering a fault).",
		SilenceUsage:  true,
		SilenceErrors: true, // main prints them: status's verdict is a code without a message
		Version:       version.Describe(),
	}
	root.PersistentFlags().StringVar(&nf.config, "config", clusterconfig.Path, "the node configuration")
	root.PersistentFlags().StringVar(&nf.node, "node", "", "this node's name (default: the host name)")
	// Declared here so that cobra adds no -v: in oc and kubectl, -v is verbosity.
	root.Flags().Bool("version", false, "print tnfctl's version (the layer's)")
	root.AddCommand(&cobra.Command{Use: "version", Short: "Print tnfctl's version (the layer's), as --version does", Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "tnfctl version "+version.Describe())
		}})
	root.AddCommand(fenceCheckCommand(&nf), setupCommand(&nf), statusCommand(&nf), confirmCommand(&nf), acceptLossCommand(&nf), startEmptyCommand(&nf), restoreCommand(&nf), fenceDrillCommand(&nf), staticPodGuardCommand(&nf), autoUnblockCommand(&nf), outOfServiceCommand(&nf), handoverCommand(&nf), installerKubeletCommand(&nf), syncSecretsCommand(&nf), installCredentialCommand(&nf), metricsCommand(&nf), publishStatusCommand(&nf), powerWatchCommand(&nf), gatherCommand(&nf))
	return root
}

// hide keeps flags that tests and the units need out of --help and the reference: they are not
// for people (a shorter BMC gap, a state file elsewhere).
func hide(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		if err := cmd.Flags().MarkHidden(n); err != nil {
			panic(err) // a flag renamed without its hide: caught by every test that builds the tree
		}
	}
}
