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
	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/buildlayer"
	"github.com/tnf-layer/tnf-layer/internal/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/labbase"
)

func main() {
	// buildah re-executes this binary for its chroot and mount helpers.
	if buildah.InitReexec() {
		return
	}
	var (
		o         buildlayer.Options
		nodeIPs   []string
		asJSON    bool
		tlsVerify bool
	)
	cmd := &cobra.Command{
		Use:   "build-layer (--ocp VERSION | --layer NAME) (--push DEST | --dry-run DIR) [flags]",
		Short: "Render the OS layer's build context and the manifests that put it on a cluster",
		Long: "build-layer resolves a layer definition (layers/ocp-VERSION.yaml or layers/NAME.yaml), compiles the agents " +
			"for the target, renders the Containerfile and writes the manifests: the node configuration MachineConfig " +
			"(from --cluster tnf.yaml or --install-config), and for an already pushed --layer-image the MachineOSConfig " +
			"and the osImageURL MachineConfig. The base and extensions images of a release come from its payload's " +
			"image-references unless --base and --extensions are given. --push builds with buildah (vfs, chroot) and " +
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
				log := cmd.ErrOrStderr()
				if asJSON {
					log = io.Discard
				}
				b, err := buildlayer.Build(cmd.Context(), o, log)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), b)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pushed %s\n", b.Pushed)
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
	f.StringVar(&o.OCP, "ocp", "", "OpenShift release (layers/ocp-VERSION.yaml)")
	f.StringVar(&o.Layer, "layer", "", "layer definition by name (e.g. lab)")
	f.StringVar(&o.LayersDir, "layers-dir", "", "read layer definitions from this folder instead of the built-in ones")
	f.StringVar(&o.Base, "base", "", "base image, pinned by digest")
	f.StringVar(&o.Extensions, "extensions", "", "the release's rhel-coreos-extensions image, pinned by digest")
	f.StringVar(&o.ReleaseImage, "release-image", "", "release payload to resolve the base from (default: the layer's)")
	f.StringVar(&o.AuthFile, "authfile", "", "registry credentials (default: the usual auth file locations)")
	f.BoolVar(&tlsVerify, "tls-verify", true, "verify registries' TLS certificates")
	f.StringVar(&o.Source, "source", ".", "repository to compile the agents from")
	f.StringVar(&o.Arch, "arch", "", "target architecture (GOARCH; default: this machine's)")
	f.StringVar(&o.Commit, "commit", "", "source commit for the image label")
	f.StringVar(&o.DryRun, "dry-run", "", "render the build context and the manifests into this folder; no build, no push")
	f.StringVar(&o.Push, "push", "", "build and push to docker://…, oci:…, oci-archive:… or dir:…")
	f.StringVar(&o.Store, "store", buildlayer.DefaultStore, "the build's image store (vfs)")
	f.StringVar(&o.EmitManifests, "emit-manifests", "", "with --push: write the manifests to this folder")
	f.StringVar(&o.Pool, "pool", "master", "machine config pool")
	f.StringVar(&o.PushSpec, "push-spec", "", "MachineOSConfig renderedImagePushSpec")
	f.StringVar(&o.PushSecret, "push-secret", "", "MachineOSConfig renderedImagePushSecret")
	f.StringVar(&o.LayerImage, "layer-image", "", "an already pushed layer, by digest, for the MachineOSConfig and osImageURL")
	f.StringVar(&o.Cluster, "cluster", "", "tnf.yaml: the node configuration")
	f.StringVar(&o.InstallCfg, "install-config", "", "install-config.yaml with controlPlane.fencing.credentials")
	f.StringArrayVar(&nodeIPs, "node-ip", nil, "NAME=IP of a node named in --install-config (repeat)")
	f.BoolVar(&asJSON, "json", false, "print a JSON summary")
	cmd.AddCommand(labBaseCommand())
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func labBaseCommand() *cobra.Command {
	var store, mirror string
	cmd := &cobra.Command{
		Use:   "lab-base",
		Short: "Debootstrap Debian 12 (systemd, a kernel) into the build store as " + labbase.Name,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := imagebuild.OpenStore(store)
			if err != nil {
				return fmt.Errorf("--store %s: %w", store, err)
			}
			defer st.Shutdown(false)
			d, err := labbase.Build(cmd.Context(), st, labbase.Options{Mirror: mirror, Created: time.Unix(0, 0).UTC()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s@%s\n", strings.SplitN(labbase.Name, ":", 2)[0], d)
			return nil
		},
	}
	cmd.Flags().StringVar(&store, "store", buildlayer.DefaultStore, "the build's image store (vfs)")
	cmd.Flags().StringVar(&mirror, "mirror", "http://deb.debian.org/debian", "Debian mirror")
	return cmd
}
