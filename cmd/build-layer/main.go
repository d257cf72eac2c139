// Command build-layer turns a release (--ocp 4.19) or the lab default into the OS layer that puts
// the two-node HA stack on RHCOS, and writes the manifests that roll it onto a cluster.
package main

import (
	"errors"
	"os"

	"github.com/containers/buildah"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/build/buildlayer"
)

// Exit codes: scripts tell a layer with problems from a run that could not look.
const (
	exitError    = 1 // bad input, an unreachable registry, a failed build
	exitFindings = 2 // verify read the whole image and found problems in it
)

func main() {
	// buildah re-executes this binary for its chroot and mount helpers.
	if buildah.InitReexec() {
		return
	}
	// buildah logs through logrus at info level ("forcing host network"): only warnings here.
	logrus.SetLevel(logrus.WarnLevel)
	if err := rootCommand().Execute(); err != nil {
		var findings *buildlayer.FindingsError
		if errors.As(err, &findings) {
			os.Exit(exitFindings)
		}
		os.Exit(exitError)
	}
}

// rootCommand is build-layer with every subcommand: the binary runs it, the reference is
// generated from it and the documentation is checked against it.
//
// Without a subcommand it builds, as build does: `build-layer --ocp 4.19 --push …` is the form the
// tool was specified in and CI jobs are written for.
func rootCommand() *cobra.Command {
	root := buildCommand()
	root.Use = "build-layer [build flags] | build-layer COMMAND"
	root.Short = "Build the OS layer of a two-node OpenShift cluster with fencing, and the manifests that roll it out"
	root.Long = "build-layer resolves a layer definition (layers/ocp-VERSION.yaml, or layers/NAME.yaml), compiles the " +
		"agents for the target, renders the Containerfile and the manifests, builds the layer with buildah and " +
		"pushes it with containers/image, and verifies a pushed layer. Without a command it builds, as " +
		"`build-layer build` does, with the same flags.\n\n" +
		"Exit codes: 0 done; 1 an error (bad input, an unreachable registry, a failed build); " +
		"2 verify found problems in the image."
	root.Example = `  build-layer --ocp 4.19 --push docker://registry.example.com/tnf/layer:4.19 --authfile auth.json
  build-layer render --layer lab --dir out/lab`
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	// Declared here so that cobra adds no -v: in oc and kubectl, -v is verbosity.
	root.Flags().Bool("version", false, "print build-layer's own version")
	root.AddCommand(buildCommand(), renderCommand(), verifyCommand(), labBaseCommand(), versionCommand())
	return root
}
