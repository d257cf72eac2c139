// Command tnfctl is the node-side tool of a two-node cluster: first-boot setup, status, the
// admin's confirmation that the peer is down, the admin's acceptance of etcd data loss, the
// BMC-verified automatic unblock, BMC checks.
package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// exitCoder is an error with its own exit code.
type exitCoder interface{ ExitCode() int }

// nodeFlags are where the node configuration is and which node this is.
type nodeFlags struct {
	config, node string
}

// load reads cluster.yaml and returns it with this node and its peer.
func (f nodeFlags) load() (clusterconfig.NodeConfig, error) {
	return clusterconfig.LoadNode(f.config, f.node)
}

func main() {
	var nf nodeFlags
	root := &cobra.Command{
		Use:           "tnfctl",
		Short:         "Two-node OpenShift with fencing: node-side tool",
		SilenceUsage:  true,
		SilenceErrors: false,
		Version:       version.Version,
	}
	root.PersistentFlags().StringVar(&nf.config, "config", clusterconfig.Path, "the node configuration")
	root.PersistentFlags().StringVar(&nf.node, "node", "", "this node's name (default: the host name)")
	root.AddCommand(fenceCheckCommand(&nf), setupCommand(&nf), statusCommand(&nf), confirmCommand(&nf), acceptLossCommand(&nf), autoUnblockCommand(&nf), outOfServiceCommand(&nf), metricsCommand(&nf), gatherCommand(&nf))
	if err := root.Execute(); err != nil {
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}
