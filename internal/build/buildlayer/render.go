package buildlayer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/build/alerts"
	"github.com/tnf-layer/tnf-layer/internal/build/containerfile"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/build/manifests"
	"github.com/tnf-layer/tnf-layer/internal/build/release"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/outofservice"
)

// binaryPackages maps a bin/NAME of a layer definition to the Go package that builds it.
var binaryPackages = map[string]string{
	"ocf-etcd":           "./agents/ocf-etcd",
	"tnf-etcd-agent":     "./agents/tnf-etcd-agent",
	"tnfctl":             "./agents/tnfctl",
	"fence_tnf_poweroff": "./agents/fence_tnf_poweroff",
	"fence_tnf_redfish":  "./agents/fence_tnf_redfish",
	"tnf-fencing-alert":  "./agents/tnf-fencing-alert",
	"etcd":               "./cmd/etcd",
	"etcdctl":            "./cmd/etcdctl",
}

// Summary says what a run produced.
type Summary struct {
	Layer         string          `json:"layer"`
	Release       *release.Images `json:"release,omitempty"`
	Base          string          `json:"base"`
	Containerfile string          `json:"containerfile,omitempty"`
	Context       string          `json:"context,omitempty"`
	Manifests     []string        `json:"manifests,omitempty"`
}

// DryRun renders the build context (Containerfile and the compiled agents) and the manifests
// into o.DryRun, without building or pushing. Nothing is half-written: everything goes to a
// temporary folder beside it, which replaces o.DryRun only when complete.
func DryRun(o Options) (Summary, error) {
	o.Defaults()
	l, err := o.LoadLayer()
	if err != nil {
		return Summary{}, err
	}
	if err := o.CheckSource(); err != nil {
		return Summary{}, err
	}
	rel, err := resolveBase(context.Background(), &o, l)
	if err != nil {
		return Summary{}, err
	}
	base := o.Base
	if base == "" {
		base = l.Base
	}
	if base == "" {
		return Summary{}, fmt.Errorf("--base: needed for layer %s", l.Name)
	}
	if l.Packages.Source == "rhcos-extensions" && o.Extensions == "" {
		return Summary{}, fmt.Errorf("--extensions: needed for layer %s (the release's rhel-coreos-extensions image, by digest)", l.Name)
	}
	out, err := filepath.Abs(o.DryRun)
	if err != nil {
		return Summary{}, err
	}
	if err := replaceable(out); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return Summary{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+"-")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, dryRunMarker), []byte("written by build-layer render; replaced by its next run\n"), 0o644); err != nil {
		return Summary{}, err
	}
	// Manifests first: they check the remaining inputs before the agents are compiled.
	names, err := renderManifests(o, l, filepath.Join(tmp, "manifests"), filepath.Join(out, "manifests"))
	if err != nil {
		return Summary{}, err
	}
	if err := renderContext(o, l, base, filepath.Join(tmp, "context")); err != nil {
		return Summary{}, err
	}
	s := Summary{Layer: l.Name, Release: rel, Base: base, Context: filepath.Join(out, "context"), Containerfile: filepath.Join(out, "context", "Containerfile")}
	for _, n := range names {
		s.Manifests = append(s.Manifests, filepath.Join(out, "manifests", n))
	}
	if err := os.RemoveAll(out); err != nil {
		return Summary{}, err
	}
	if err := os.Rename(tmp, out); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// dryRunMarker marks a folder as build-layer render's output, which the next render may replace.
const dryRunMarker = ".build-layer-dry-run"

// replaceable refuses an output folder that render did not write: the run replaces the folder
// whole, and `--dir .` or a typo must not delete a checkout or a home folder. A folder that
// does not exist, an empty one, and an earlier output (its marker) may be replaced.
func replaceable(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--dir: %w", err)
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, dryRunMarker)); err != nil {
		return fmt.Errorf("--dir: %s holds files that no earlier render wrote (no %s): it would be replaced whole; name a new or empty folder", out, dryRunMarker)
	}
	return nil
}

// renderContext renders the Containerfile, compiles the layer's binaries for the target
// (static, -trimpath, stripped) and stages every file of the layer in the context's tree at its
// destination path with its mode, and each preloaded image's binary in that image's root.
func renderContext(o Options, l layerdef.Layer, base, dir string) error {
	labels := l.Labels(o.Version, o.Commit, o.Release)
	in := containerfile.Inputs{Base: base, Extensions: o.Extensions, PackageSource: l.Packages.Source, PackageCommand: l.Packages.Command,
		Packages: l.Packages.Names, Finalize: l.Finalize, Enable: l.Enable, Labels: labels, ImageStore: l.ImageStorePath()}
	cf, err := containerfile.Render(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(cf), 0o644); err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", "tnf-layer-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	var pkgs []string
	for _, b := range l.Binaries() {
		pkg, ok := binaryPackages[b]
		if !ok {
			return fmt.Errorf("layer %s: no Go package builds bin/%s", l.Name, b)
		}
		pkgs = append(pkgs, pkg)
	}
	// The agents report the release their operating system was built on only when this image is
	// that operating system (osImageURL): on-cluster, MCO builds the OS for each release and
	// takes only our files from this image.
	release := ""
	if o.Rollout == RolloutOutOfCluster {
		release = labels[layerdef.LabelRelease]
	}
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w -buildid= " + version.LinkFlags(o.Version, release), "-o", bin + "/"}, pkgs...)
	gobuild := command.Cmd{Dir: o.Source, Env: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + o.Arch}}
	if _, err := gobuild.Run(context.Background(), "go", args...); err != nil {
		return fmt.Errorf("compiling for linux/%s: %w", o.Arch, err)
	}
	for _, f := range l.Files {
		src := filepath.Join(o.Source, f.From)
		if name, ok := strings.CutPrefix(f.From, "bin/"); ok {
			src = filepath.Join(bin, name)
		}
		if err := stage(src, filepath.Join(dir, containerfile.Tree, filepath.FromSlash(f.To)), f.ModeBits()); err != nil {
			return fmt.Errorf("layer %s: files: %w", l.Name, err)
		}
	}
	for i, img := range l.Images {
		name := strings.TrimPrefix(img.Binary, "bin/")
		if err := stage(filepath.Join(bin, name), filepath.Join(imageRoot(dir, i), "usr", "bin", name), 0o755); err != nil {
			return fmt.Errorf("layer %s: images[%d]: %w", l.Name, i, err)
		}
	}
	return nil
}

// imageRoot is the folder of the build context holding the root file system of the layer's
// i-th preloaded image.
func imageRoot(dir string, i int) string {
	return filepath.Join(dir, "image-roots", strconv.Itoa(i))
}

// stage copies src to dst with mode, creating dst's folders.
func stage(src, dst string, mode uint32) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return err
	}
	// Chmod after writing: the mode must not depend on the umask.
	return os.Chmod(dst, os.FileMode(mode))
}

// renderManifests writes what it has the inputs for: from --node-config or --install-config, the
// node configuration MachineConfig with its Secrets (--secrets-in) and, given an already pushed
// --layer-image, the manifests of the one rollout --rollout names. A Corosync key an earlier
// render left in earlier is kept.
func renderManifests(o Options, l layerdef.Layer, dir, earlier string) ([]string, error) {
	objs := map[string]any{}
	if o.Cluster != "" && o.InstallCfg != "" {
		return nil, fmt.Errorf("--node-config and --install-config exclude each other")
	}
	var in clusterconfig.Input
	var err error
	switch {
	case o.Cluster != "":
		if in, err = clusterconfig.LoadTNF(o.Cluster); err != nil {
			err = fmt.Errorf("--node-config: %w", err)
		}
	case o.InstallCfg != "":
		if in, err = clusterconfig.LoadInstallConfig(o.InstallCfg, o.NodeIPs, o.BMCPins); err != nil {
			err = fmt.Errorf("--install-config: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if o.Cluster != "" || o.InstallCfg != "" {
		if err := etcdRuntime(l, &in.Config); err != nil {
			return nil, fmt.Errorf("%s: %w", cmp.Or(o.Cluster, o.InstallCfg), err)
		}
		key, err := manifests.EarlierAuthkey(earlier, o.Pool)
		if err != nil {
			return nil, fmt.Errorf("the Corosync key of the earlier render: %w", err)
		}
		if key != nil {
			if err := in.ReuseAuthkey(key); err != nil {
				return nil, fmt.Errorf("%s: %w", earlier, err)
			}
		}
		switch o.SecretsIn {
		case SecretsInSecret:
			secrets, err := manifests.NodeSecrets(in)
			if err != nil {
				return nil, err
			}
			maps.Copy(objs, secrets)
			in = manifests.FromAPI(in)
		case SecretsInMachineConfig:
			// The files stay in the node configuration MachineConfig.
		default:
			return nil, fmt.Errorf("--secrets-in: %q is neither %s nor %s", o.SecretsIn, SecretsInSecret, SecretsInMachineConfig)
		}
		// A change of the node configuration MachineConfig restarts tnf-reconfigure.service
		// instead of rebooting the nodes.
		policy, err := manifests.NodeDisruptionPolicy(in)
		if err != nil {
			return nil, err
		}
		objs["machineconfiguration-cluster.yaml"] = policy
		mc, err := manifests.NodeConfig(o.Pool, in, l.IgnitionVersion())
		if err != nil {
			return nil, err
		}
		objs["99-"+o.Pool+"-tnf-node-config.yaml"] = mc
		if !in.Config.OutOfService.Disabled && (o.SecretsIn != SecretsInSecret || in.Config.OutOfService.KubeconfigFile != "") {
			// What tnf-out-of-service.service may do through the API, for the credential
			// outOfService.kubeconfigFile names (the node's own has its role in NodeSecrets):
			// these two Nodes only.
			objs["clusterrole-tnf-out-of-service.yaml"] = outofservice.ClusterRole(outofservice.ClusterRoleName, nodeNames(in.Config)...)
		}
		svc, endpoints, monitor, err := manifests.MetricsScrape(in)
		if err != nil {
			return nil, err
		}
		objs["tnf-metrics-service.yaml"], objs["tnf-metrics-endpoints.yaml"], objs["tnf-metrics-servicemonitor.yaml"] = svc, endpoints, monitor
	}
	if o.LayerImage != "" {
		rollout, err := rolloutManifests(o, l)
		if err != nil {
			return nil, err
		}
		maps.Copy(objs, rollout)
		// The alerts go with the layer whose tnf-metrics.service serves what they read, and link
		// to the runbooks of the commit it was built from.
		objs["prometheusrule-tnf-layer.yaml"] = alerts.PrometheusRule(o.Commit)
		// And what tnf-handover.service may do: set the handover's conditions on the Etcd object.
		objs["clusterrole-tnf-handover.yaml"] = handover.ClusterRole()
		// Deleting what puts the layer on the nodes stops the cluster once it is handed over.
		var mcs, moscs []string
		for _, obj := range objs {
			switch m := obj.(type) {
			case *mcfgv1.MachineConfig:
				mcs = append(mcs, m.Name)
			case *mcfgv1.MachineOSConfig:
				moscs = append(moscs, m.Name)
			}
		}
		policy, binding, err := manifests.RemovalGuard(o.Pool, mcs, moscs)
		if err != nil {
			return nil, err
		}
		objs["validatingadmissionpolicy-tnf-layer-removal-guard.yaml"], objs["validatingadmissionpolicybinding-tnf-layer-removal-guard.yaml"] = policy, binding
	}
	if len(objs) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var names []string
	for name, obj := range objs {
		data, err := manifests.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			return nil, err
		}
		// 0600: the Secrets, or the node configuration, carry the BMC passwords.
		if err := fsutil.WriteFileAtomic(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// etcdRuntime is the etcd agent's runtime for layer l: an RHCOS node has no /usr/bin/etcd, so
// it runs the release's etcd image with podman (the default there), and exec, which would find no
// binary and, without certificates, an etcd open to the network, is refused.
func etcdRuntime(l layerdef.Layer, cfg *clusterconfig.Config) error {
	if l.Kind != "rhcos" {
		return nil
	}
	switch r := cfg.Resources.Etcd["runtime"]; r {
	case "":
		if cfg.Resources.Etcd == nil {
			cfg.Resources.Etcd = map[string]string{}
		}
		cfg.Resources.Etcd["runtime"] = "podman"
	case "podman":
	default:
		return fmt.Errorf("resources.etcd.runtime: %q: layer %s is RHCOS, which has no etcd binary: it runs the release's etcd with podman", r, l.Name)
	}
	return nil
}

// Where the node configuration's secrets go: Secrets the nodes fetch through the API, or files
// in the node configuration MachineConfig (for a lab without an API: a MachineConfig is not
// encrypted at rest and anyone who may read MachineConfigs reads them).
const (
	SecretsInSecret        = "secret"
	SecretsInMachineConfig = "machineconfig"
)

// The rollouts: one at a time, never both in one folder (newer MCO would build the on-cluster
// image FROM the osImageURL MachineConfig's already layered image).
const (
	RolloutOnCluster    = "on-cluster"
	RolloutOutOfCluster = "out-of-cluster"
)

// rolloutManifests are the manifests of o.Rollout for the pushed o.LayerImage: on-cluster, the
// MachineOSConfig adding our files and the MachineConfig naming the release's extension for the
// packages; out-of-cluster, the MachineConfig booting the layer as osImageURL.
func rolloutManifests(o Options, l layerdef.Layer) (map[string]any, error) {
	switch o.Rollout {
	case RolloutOutOfCluster:
		mc, err := manifests.OSImageURL(o.Pool, o.LayerImage)
		if err != nil {
			return nil, err
		}
		return map[string]any{"99-" + o.Pool + "-tnf-os-image.yaml": mc}, nil
	case RolloutOnCluster:
		if l.Kind != "rhcos" || l.Packages.Extension == "" {
			return nil, fmt.Errorf("--rollout %s: layer %s has no RHCOS extension for its packages (packages.extension): use --rollout %s",
				RolloutOnCluster, l.Name, RolloutOutOfCluster)
		}
		var paths []string
		for _, f := range l.Files {
			paths = append(paths, f.To)
		}
		finalize := map[string]string{"bootc-lint": "bootc container lint", "ostree-commit": "ostree container commit"}[l.Finalize]
		content, err := manifests.Containerfile(manifests.Layer{Image: o.LayerImage, Paths: paths, Enable: l.Enable, Finalize: finalize})
		if err != nil {
			return nil, err
		}
		mosc, err := manifests.MachineOSConfig(manifests.MachineOSConfigInput{Pool: o.Pool, PushSpec: o.PushSpec, PushSecret: o.PushSecret,
			BaseImagePullSecret: o.BaseImagePullSecret}, content)
		if err != nil {
			return nil, err
		}
		ext, err := manifests.Extensions(o.Pool, l.Packages.Extension)
		if err != nil {
			return nil, err
		}
		return map[string]any{"machineosconfig-" + o.Pool + ".yaml": mosc, "99-" + o.Pool + "-tnf-extensions.yaml": ext}, nil
	default:
		return nil, fmt.Errorf("--rollout: %q is neither %s nor %s", o.Rollout, RolloutOnCluster, RolloutOutOfCluster)
	}
}

// nodeNames are the names of c's nodes, in its order.
func nodeNames(c clusterconfig.Config) []string {
	names := make([]string, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	return names
}
