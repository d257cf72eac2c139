// Command build-layer turns a release (--ocp 4.19) or the lab default into the OS layer that puts
// the two-node HA stack on RHCOS, and writes the manifests that roll it onto a cluster.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/containers/buildah"
	"github.com/docker/go-units"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tnf-layer/tnf-layer/internal/build/buildlayer"
	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/labbase"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

func main() {
	// buildah re-executes this binary for its chroot and mount helpers.
	if buildah.InitReexec() {
		return
	}
	// buildah logs through logrus at info level ("forcing host network"): only warnings here.
	logrus.SetLevel(logrus.WarnLevel)
	if err := rootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

// rootCommand is build-layer with every subcommand: the binary runs it, the reference is
// generated from it and the documentation is checked against it.
func rootCommand() *cobra.Command {
	var (
		o         buildlayer.Options
		nodeIPs   []string
		asJSON    bool
		tlsVerify bool
		verbose   bool
	)
	cmd := &cobra.Command{
		Use:   "build-layer (--ocp VERSION | --layer NAME) (--push DEST | --dry-run DIR) [flags]",
		Short: "Build and push the OS layer, and write the manifests that put it on a cluster",
		Example: `  build-layer --ocp 4.19 --dry-run out/
  build-layer --ocp 4.19 --push docker://registry.example.com/tnf/layer:4.19 --authfile auth.json \
      --emit-manifests out/manifests --cluster tnf.yaml`,
		Long: "build-layer resolves a layer definition (layers/ocp-VERSION.yaml or layers/NAME.yaml), compiles the agents " +
			"for the target, renders the Containerfile and writes the manifests: the node configuration MachineConfig " +
			"(from --cluster tnf.yaml or --install-config), and for an already pushed --layer-image the MachineOSConfig " +
			"and the osImageURL MachineConfig. The base and extensions images of a release come from its payload's " +
			"image-references unless --base and --extensions are given. --push builds with buildah (overlay or vfs, chroot) and " +
			"pushes with containers/image; --dry-run only renders.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.DryRun == "") == (o.Push == "") {
				return errors.New("give exactly one of --push DEST and --dry-run DIR")
			}
			o.SkipTLSVerify = !tlsVerify
			o.NodeIPs = map[string]string{}
			for _, kv := range nodeIPs {
				name, ip, ok := strings.Cut(kv, "=")
				if !ok || name == "" || ip == "" {
					return fmt.Errorf("--node-ip: %q is not NAME=IP", kv)
				}
				o.NodeIPs[name] = ip
			}
			if o.Push != "" {
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
				if asJSON {
					return printJSON(cmd.OutOrStdout(), b)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pushed %s\nversion %s, commit %s; adds %s over the base in %d layer(s)\n",
					b.Pushed, b.Version, b.Commit, units.BytesSize(float64(b.AddedBytes)), len(b.AddedLayers))
				for _, st := range b.Steps {
					fmt.Fprintf(cmd.OutOrStdout(), "  %-15s %6.1f s\n", st.Name, st.Seconds)
				}
				for _, m := range b.Manifests {
					fmt.Fprintf(cmd.OutOrStdout(), "manifest: %s\n", m)
				}
				return nil
			}
			s, err := buildlayer.DryRun(o)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), s)
			}
			if s.Release != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "release %s (%s)\nrhel-coreos: %s\nrhel-coreos-extensions: %s\n",
					s.Release.Release, s.Release.ReleaseDigest, s.Release.RHCOS, s.Release.Extensions)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "layer %s on %s\ncontext: %s\n", s.Layer, s.Base, s.Context)
			for _, m := range s.Manifests {
				fmt.Fprintf(cmd.OutOrStdout(), "manifest: %s\n", m)
			}
			return nil
		},
	}
	f := cmd.Flags()
	layerAndRegistryFlags(f, &o, &tlsVerify)
	f.StringVar(&o.Base, "base", "", "base image, pinned by digest")
	f.StringVar(&o.Extensions, "extensions", "", "the release's rhel-coreos-extensions image, pinned by digest")
	f.StringVar(&o.ReleaseImage, "release-image", "", "release payload to resolve the base from (default: the layer's)")
	f.StringVar(&o.Source, "source", ".", "repository to compile the agents from")
	f.StringVar(&o.Arch, "arch", "", "target architecture (GOARCH; default: this machine's)")
	f.StringVar(&o.Commit, "commit", "", "source commit for the image label (default: git HEAD of --source)")
	f.StringVar(&o.Version, "version", "", "layer version for the labels and the agents (default: git describe of --source)")
	f.BoolVar(&verbose, "verbose", false, "show buildah's and the push's output even when stderr is not a terminal")
	f.StringVar(&o.DryRun, "dry-run", "", "render the build context and the manifests into this folder; no build, no push")
	f.StringVar(&o.Push, "push", "", "build and push to docker://…, oci:…, oci-archive:… or dir:…")
	f.StringVar(&o.Store, "store", buildlayer.DefaultStore, "the build's image store (overlay, or vfs)")
	f.StringVar(&o.EmitManifests, "emit-manifests", "", "with --push: write the manifests to this folder")
	f.StringVar(&o.Rollout, "rollout", buildlayer.RolloutOutOfCluster, "the manifests of one rollout: "+buildlayer.RolloutOutOfCluster+
		" (a MachineConfig booting the layer as osImageURL) or "+buildlayer.RolloutOnCluster+
		" (a MachineOSConfig adding our files, and the release's extension for the packages)")
	f.StringVar(&o.Pool, "pool", "master", "machine config pool")
	f.StringVar(&o.PushSpec, "push-spec", "", "on-cluster: MachineOSConfig renderedImagePushSpec")
	f.StringVar(&o.PushSecret, "push-secret", "", "on-cluster: MachineOSConfig renderedImagePushSecret")
	f.StringVar(&o.BaseImagePullSecret, "base-image-pull-secret", "", "on-cluster: MachineOSConfig baseImagePullSecret, when the layer's registry needs credentials the cluster's global pull secret lacks")
	f.StringVar(&o.LayerImage, "layer-image", "", "an already pushed layer, by digest, for the rollout's manifests")
	f.StringVar(&o.Cluster, "cluster", "", "tnf.yaml: the node configuration")
	f.StringVar(&o.InstallCfg, "install-config", "", "install-config.yaml with controlPlane.fencing.credentials")
	f.StringArrayVar(&nodeIPs, "node-ip", nil, "NAME=IP of a node named in --install-config (repeat)")
	f.BoolVar(&asJSON, "json", false, "print a JSON summary")
	cmd.AddCommand(labBaseCommand(), verifyCommand())
	return cmd
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// layerAndRegistryFlags are the flags that pick a layer definition and reach registries, shared
// by the build and verify.
func layerAndRegistryFlags(f *pflag.FlagSet, o *buildlayer.Options, tlsVerify *bool) {
	f.StringVar(&o.OCP, "ocp", "", "OpenShift release (layers/ocp-VERSION.yaml)")
	f.StringVar(&o.Layer, "layer", "", "layer definition by name (e.g. lab)")
	f.StringVar(&o.LayersDir, "layers-dir", "", "read layer definitions from this folder instead of the built-in ones")
	f.StringVar(&o.AuthFile, "authfile", "", "registry credentials (default: the usual auth file locations)")
	f.BoolVar(tlsVerify, "tls-verify", true, "verify registries' TLS certificates")
}

func verifyCommand() *cobra.Command {
	var (
		o         buildlayer.Options
		version   string
		asJSON    bool
		tlsVerify bool
	)
	cmd := &cobra.Command{
		Use:     "verify IMAGE",
		Short:   "Check a pushed layer: its files and modes, no secret material in any layer, its labels",
		Example: `  build-layer verify docker://registry.example.com/tnf/layer:4.19 --authfile auth.json`,
		Long: "verify reads IMAGE (docker://…, oci:…, oci-archive:…, dir:…; a bare name is a registry image) with every " +
			"layer checked against its digest, and checks it against its layer definition (--ocp/--layer, default: the one " +
			"its io.tnf-layer.layer label names): every file the layer ships is there, a regular file owned by root with its " +
			"mode; the HA stack's commands are installed; no layer holds node secrets, cluster keys, SSH host keys, registry " +
			"credentials or PEM private keys, and no environment variable or build step carries a secret; the labels name " +
			"the layer, version, source commit and release. Exits non-zero with every finding listed.",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SkipTLSVerify = !tlsVerify
			s, err := buildlayer.Verify(cmd.Context(), o, args[0], version)
			if asJSON {
				if jerr := printJSON(cmd.OutOrStdout(), s); jerr != nil {
					return jerr
				}
			} else if s.Digest != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\ndigest %s, layer %s, version %s, commit %s, %d layers\n", s.Image, s.Digest,
					s.Layer, s.Labels[layerdef.LabelVersion], s.Labels[layerdef.LabelCommit], s.Layers)
				for _, f := range s.Findings {
					fmt.Fprintf(cmd.OutOrStdout(), "  FAIL %s\n", f)
				}
				if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), "ok: files, modes, HA commands, no secret material, labels")
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	layerAndRegistryFlags(f, &o, &tlsVerify)
	f.StringVar(&version, "version", "", "the layer version the image must carry")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func labBaseCommand() *cobra.Command {
	var (
		store, mirror string
		rebuild       bool
	)
	cmd := &cobra.Command{
		Use:   "lab-base",
		Short: "Debootstrap Debian 12 (systemd, a kernel) into the build store as " + labbase.Name + " (kept once built)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := imagebuild.OpenStore(store)
			if err != nil {
				return fmt.Errorf("--store %s: %w", store, err)
			}
			defer imagebuild.CloseStore(st)
			d, err := labbase.Build(cmd.Context(), st, labbase.Options{Mirror: mirror, Created: time.Unix(0, 0).UTC(), Rebuild: rebuild})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s@%s\n", strings.SplitN(labbase.Name, ":", 2)[0], d)
			return nil
		},
	}
	cmd.Flags().StringVar(&store, "store", buildlayer.DefaultStore, "the build's image store (overlay, or vfs)")
	cmd.Flags().StringVar(&mirror, "mirror", "http://deb.debian.org/debian", "Debian mirror")
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "debootstrap again even when the store has the base")
	return cmd
}
