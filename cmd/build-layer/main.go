// Command build-layer turns a release (--ocp 4.19) or the lab default into the OS layer that puts
// the two-node HA stack on RHCOS, and writes the manifests that roll it onto a cluster.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/buildlayer"
)

func main() {
	var (
		o         buildlayer.Options
		nodeIPs   []string
		asJSON    bool
		tlsVerify bool
	)
	cmd := &cobra.Command{
		Use:   "build-layer (--ocp VERSION | --layer NAME) --dry-run DIR [flags]",
		Short: "Render the OS layer's build context and the manifests that put it on a cluster",
		Long: "build-layer resolves a layer definition (layers/ocp-VERSION.yaml or layers/NAME.yaml), compiles the agents " +
			"for the target, renders the Containerfile and writes the manifests: the node configuration MachineConfig " +
			"(from --cluster tnf.yaml or --install-config), and for an already pushed --layer-image the MachineOSConfig " +
			"and the osImageURL MachineConfig. The base and extensions images of a release come from its payload's " +
			"image-references unless --base and --extensions are given. This version renders only (--dry-run); " +
			"building with buildah and pushing come next.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.DryRun == "" {
				return errors.New("--dry-run DIR is needed: building and pushing are not part of this version yet")
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
			s, err := buildlayer.DryRun(o)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
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
	f.StringVar(&o.Pool, "pool", "master", "machine config pool")
	f.StringVar(&o.PushSpec, "push-spec", "", "MachineOSConfig renderedImagePushSpec")
	f.StringVar(&o.PushSecret, "push-secret", "", "MachineOSConfig renderedImagePushSecret")
	f.StringVar(&o.LayerImage, "layer-image", "", "an already pushed layer, by digest, for the MachineOSConfig and osImageURL")
	f.StringVar(&o.Cluster, "cluster", "", "tnf.yaml: the node configuration")
	f.StringVar(&o.InstallCfg, "install-config", "", "install-config.yaml with controlPlane.fencing.credentials")
	f.StringArrayVar(&nodeIPs, "node-ip", nil, "NAME=IP of a node named in --install-config (repeat)")
	f.BoolVar(&asJSON, "json", false, "print a JSON summary")
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
