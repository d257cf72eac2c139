package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/docker/go-units"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tnf-layer/tnf-layer/internal/base/output"
	"github.com/tnf-layer/tnf-layer/internal/build/buildlayer"
)

func buildCommand() *cobra.Command {
	var (
		in      layerInputs
		format  string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "build (--ocp VERSION | --layer NAME) --push DEST [flags]",
		Short: "Build the layer, push it, and write the manifests that put it on a cluster",
		Long: "build compiles the agents for the target, renders the Containerfile from the layer definition, builds " +
			"it with buildah (overlay or vfs, chroot isolation) and pushes the result with containers/image. The base " +
			"and extensions images of a release come from its payload's image-references unless --base and --extensions " +
			"are given. With --emit-manifests it writes the manifests of the rollout for the pushed image: the node " +
			"configuration MachineConfig (from --node-config tnf.yaml or --install-config), the osImageURL MachineConfig " +
			"or the MachineOSConfig, the metrics Service, the alerts and the out-of-service ClusterRole. Every manifest " +
			"input is checked before anything is built.",
		Example: `  build-layer build --ocp 4.19 --release-image quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64 \
      --push docker://registry.example.com/tnf/layer:4.19.7 --authfile auth.json \
      --emit-manifests out/manifests --node-config tnf.yaml
  build-layer build --layer lab --push oci:out/lab:latest -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().NFlag() == 0 {
				return cmd.Help()
			}
			o, err := in.options()
			if err != nil {
				return err
			}
			if o.Push == "" {
				return errors.New("--push: missing (docker://…, oci:…, oci-archive:… or dir:…); to render only: build-layer render")
			}
			// Progress lines always; buildah's and the push's own output on a terminal only
			// (or asked for), so CI logs stay readable.
			out := buildlayer.Output{Progress: cmd.ErrOrStderr(), Log: io.Discard}
			if verbose || term.IsTerminal(int(os.Stderr.Fd())) {
				out.Log = cmd.ErrOrStderr()
			}
			b, err := buildlayer.Build(cmd.Context(), o, out)
			if err != nil {
				return err
			}
			return output.Print(cmd.OutOrStdout(), format, b, func(w io.Writer) {
				fmt.Fprintf(w, "pushed %s\nversion %s, commit %s; adds %s over the base in %d layer(s)\n",
					b.Pushed, b.Version, b.Commit, units.BytesSize(float64(b.AddedBytes)), len(b.AddedLayers))
				for _, st := range b.Steps {
					fmt.Fprintf(w, "  %-15s %6.1f s\n", st.Name, st.Seconds)
				}
				printManifests(w, b.Manifests)
			})
		},
	}
	f := cmd.Flags()
	in.register(f)
	f.StringVar(&in.o.Push, "push", "", "push to docker://…, oci:…, oci-archive:… or dir:…")
	storeFlag(f, &in.o.Store)
	f.StringVar(&in.o.EmitManifests, "emit-manifests", "", "write the manifests to this folder")
	f.BoolVar(&verbose, "verbose", false, "show buildah's and the push's output even when stderr is not a terminal")
	output.Flag(f, &format)
	return cmd
}

func renderCommand() *cobra.Command {
	var (
		in     layerInputs
		format string
	)
	cmd := &cobra.Command{
		Use:   "render (--ocp VERSION | --layer NAME) --dir DIR [flags]",
		Short: "Render the build context and the manifests into a folder; no build, no push",
		Long: "render writes what build would build from, and the manifests, into DIR: context/ (the Containerfile and " +
			"a tree/ of the layer's files with the agents compiled for the target) and manifests/. The folder is written " +
			"whole or not at all, and only a new or empty folder, or one an earlier render wrote, is replaced. Without " +
			"--layer-image the rollout's manifests that need the pushed image are left out (the os-image MachineConfig or " +
			"the MachineOSConfig and the extension's, the PrometheusRule, the handover's ClusterRole); " +
			"machineconfiguration-cluster.yaml comes with the node configuration (docs/reference: Manifests).",
		Example: `  build-layer render --ocp 4.19 --release-image quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64 --dir out/4.19
  build-layer render --ocp 4.19 --release-image quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64 \
      --dir out/render --node-config tnf.yaml   # the node configuration again`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := in.options()
			if err != nil {
				return err
			}
			if o.DryRun == "" {
				return errors.New("--dir: missing: the folder to render into")
			}
			s, err := buildlayer.DryRun(o)
			if err != nil {
				return err
			}
			return output.Print(cmd.OutOrStdout(), format, s, func(w io.Writer) {
				if s.Release != nil {
					fmt.Fprintf(w, "release %s (%s)\nrhel-coreos: %s\nrhel-coreos-extensions: %s\n",
						s.Release.Release, s.Release.ReleaseDigest, s.Release.RHCOS, s.Release.Extensions)
				}
				fmt.Fprintf(w, "layer %s on %s\ncontext: %s\n", s.Layer, s.Base, s.Context)
				printManifests(w, s.Manifests)
			})
		},
	}
	f := cmd.Flags()
	in.register(f)
	f.StringVar(&in.o.DryRun, "dir", "", "the folder to render into (DIR/manifests holds the manifests)")
	output.Flag(f, &format)
	return cmd
}

func printManifests(w io.Writer, manifests []string) {
	for _, m := range manifests {
		fmt.Fprintf(w, "manifest: %s\n", m)
	}
}
