package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
)

// versionCommand prints build-layer's own version (versionLine), as --version does.
func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print build-layer's own version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	}
}

// versionLine is build-layer's own version: the one stamped at link time, and the source revision
// Go records when it builds from a checkout. (The layer's version is --layer-version.)
func versionLine() string {
	line := "build-layer " + version.Version
	if info, ok := debug.ReadBuildInfo(); ok {
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			line += ", commit " + rev
			if settings["vcs.modified"] == "true" {
				line += " (modified)"
			}
		}
		line += ", " + info.GoVersion
	}
	return line
}
