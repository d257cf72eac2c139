// Command tnfctl is the node-side tool of a two-node cluster: BMC checks now; cluster setup,
// status and admin confirmation join it.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/version"
)

func main() {
	root := &cobra.Command{
		Use:           "tnfctl",
		Short:         "Two-node OpenShift with fencing: node-side tool",
		SilenceUsage:  true,
		SilenceErrors: false,
		Version:       version.Version,
	}
	root.AddCommand(fenceCheckCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
