// Package clitest runs a binary's cobra command tree in a test, as the binary would run it.
package clitest

import (
	"bytes"

	"github.com/spf13/cobra"
)

// Execute runs root with args and returns what it printed, standard output and error together,
// and its error.
func Execute(root *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
