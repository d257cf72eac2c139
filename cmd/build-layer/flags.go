package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tnf-layer/tnf-layer/internal/build/buildlayer"
)

// layerAndRegistryFlags pick a layer definition and reach registries: build, render and verify.
func layerAndRegistryFlags(f *pflag.FlagSet, o *buildlayer.Options, tlsVerify *bool) {
	f.StringVar(&o.OCP, "ocp", "", "OpenShift release (layers/ocp-VERSION.yaml)")
	f.StringVar(&o.Layer, "layer", "", "layer definition by name (e.g. lab)")
	f.StringVar(&o.LayersDir, "layers-dir", "", "read layer definitions from this folder instead of the built-in ones")
	f.StringVar(&o.AuthFile, "authfile", "", "registry credentials (default: the usual auth file locations)")
	f.BoolVar(tlsVerify, "tls-verify", true, "verify registries' TLS certificates")
}

// storeFlag is the build store's folder: build and lab-base.
func storeFlag(f *pflag.FlagSet, store *string) {
	f.StringVar(store, "store", buildlayer.DefaultStore, "the build's image store (overlay, or vfs)")
}

// inputFlags are what a layer is made from: build and render.
func inputFlags(f *pflag.FlagSet, o *buildlayer.Options) {
	f.StringVar(&o.Base, "base", "", "base image, pinned by digest")
	f.StringVar(&o.Extensions, "extensions", "", "the release's rhel-coreos-extensions image, pinned by digest")
	f.StringVar(&o.ReleaseImage, "release-image", "", "the release payload the cluster runs, to resolve the base, the extensions and the exact release from (rhcos layers: this, or --base, --extensions and --release)")
	f.StringVar(&o.Release, "release", "", "the exact release (4.19.7) --base and --extensions come from, for the image's release label")
	f.StringVar(&o.Source, "source", ".", "repository to compile the agents from")
	f.StringVar(&o.Arch, "arch", "", "target architecture (GOARCH; default: this machine's)")
	f.StringVar(&o.Commit, "commit", "", "source commit for the image label (default: git HEAD of --source)")
	f.StringVar(&o.Version, "layer-version", "", "layer version for the labels and the agents (default: the VERSION file of --source and its commit, as 1.2.0-dev+1a2b3c4)")
}

// manifestFlags say which manifests to write and from what node configuration: build and render.
func manifestFlags(f *pflag.FlagSet, o *buildlayer.Options, nodeIPs, bmcPins *[]string) {
	f.StringVar(&o.Rollout, "rollout", buildlayer.RolloutOutOfCluster, "the manifests of one rollout: "+buildlayer.RolloutOutOfCluster+
		" (a MachineConfig booting the layer as osImageURL) or "+buildlayer.RolloutOnCluster+
		" (a MachineOSConfig adding our files, and the release's extension for the packages)")
	f.StringVar(&o.Pool, "pool", "master", "machine config pool")
	f.StringVar(&o.PushSpec, "push-spec", "", "on-cluster: MachineOSConfig renderedImagePushSpec")
	f.StringVar(&o.PushSecret, "push-secret", "", "on-cluster: MachineOSConfig renderedImagePushSecret")
	f.StringVar(&o.BaseImagePullSecret, "base-image-pull-secret", "", "on-cluster: MachineOSConfig baseImagePullSecret, when the layer's registry needs credentials the cluster's global pull secret lacks")
	f.StringVar(&o.LayerImage, "layer-image", "", "an already pushed layer, by digest, for the rollout's manifests")
	f.StringVar(&o.Cluster, "node-config", "", "tnf.yaml: the node configuration")
	f.StringVar(&o.InstallCfg, "install-config", "", "install-config.yaml with controlPlane.fencing.credentials")
	f.StringArrayVar(nodeIPs, "node-ip", nil, "NAME=IP of a node named in --install-config (repeat)")
	f.StringArrayVar(bmcPins, "bmc-certificate-sha256", nil, "NAME=SHA256 pins the certificate of the BMC of a node named in --install-config "+
		"(openssl x509 -fingerprint -sha256; repeat): a BMC whose certificateVerification is Disabled needs one")
	f.StringVar(&o.SecretsIn, "secrets-in", buildlayer.SecretsInSecret, "where the BMC passwords and the Corosync key go: "+buildlayer.SecretsInSecret+
		" (Secrets in openshift-etcd that the nodes fetch through the API) or "+buildlayer.SecretsInMachineConfig+
		" (files in the node configuration MachineConfig: for a lab without an API only)")
}

// layerInputs are the flags of build and render: the layer, its inputs, the manifests.
type layerInputs struct {
	o         buildlayer.Options
	nodeIPs   []string
	bmcPins   []string
	tlsVerify bool
}

func (in *layerInputs) register(f *pflag.FlagSet) {
	layerAndRegistryFlags(f, &in.o, &in.tlsVerify)
	inputFlags(f, &in.o)
	manifestFlags(f, &in.o, &in.nodeIPs, &in.bmcPins)
}

// options are the flags as build-layer's options.
func (in *layerInputs) options() (buildlayer.Options, error) {
	o := in.o
	o.SkipTLSVerify = !in.tlsVerify
	var err error
	if o.NodeIPs, err = perNode("node-ip", "IP", in.nodeIPs); err != nil {
		return o, err
	}
	o.BMCPins, err = perNode("bmc-certificate-sha256", "SHA256", in.bmcPins)
	return o, err
}

// perNode reads the NAME=VALUE flags named flag.
func perNode(flag, value string, kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || name == "" || v == "" {
			return nil, fmt.Errorf("--%s: %q is not NAME=%s", flag, kv, value)
		}
		m[name] = v
	}
	return m, nil
}
