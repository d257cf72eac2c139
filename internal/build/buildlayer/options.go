// Package buildlayer is build-layer's pipeline: options → resolved inputs → build context →
// build and push (or only render) → manifests; and verify of a pushed layer.
package buildlayer

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"

	tnflayer "github.com/tnf-layer/tnf-layer"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

// DefaultStore is the build's image store.
const DefaultStore = "/var/lib/tnf-layer/storage"

// Options are build-layer's flags.
type Options struct {
	OCP           string // release version: layers/ocp-<OCP>.yaml
	Layer         string // or a layer by name
	LayersDir     string // read layer definitions from here instead of the embedded ones
	Base          string // override the base image (digest-pinned)
	Extensions    string // the release's rhel-coreos-extensions image (digest-pinned)
	ReleaseImage  string // override the layer's release payload
	Release       string // the exact release: --release, or what its payload names (filled when the payload is read)
	AuthFile      string // registry credentials (default: the usual locations)
	SkipTLSVerify bool   // do not verify registries' certificates (a registry on loopback)
	CacheDir      string // where resolved releases are kept
	Source        string // repository to compile the agents from
	Arch          string // target architecture (GOARCH)
	Commit        string // source commit label (default: the source's git HEAD)
	Version       string // layer version, in the labels and the agents (default: sourceVersion)

	DryRun        string // render into this folder
	Push          string // build and push to this destination
	Store         string // the build's image store
	EmitManifests string // write the manifests here

	// Manifests.
	Rollout             string // RolloutOnCluster or RolloutOutOfCluster
	Pool                string
	PushSpec            string
	PushSecret          string
	BaseImagePullSecret string // MachineOSConfig: pulls the base and our layer
	LayerImage          string // an already pushed layer (digest-pinned) for the MachineOSConfig
	Cluster             string // tnf.yaml
	InstallCfg          string // install-config.yaml
	NodeIPs             map[string]string
	BMCPins             map[string]string // node name → its BMC certificate's SHA-256 (install-config)
	SecretsIn           string            // SecretsInSecret (default) or SecretsInMachineConfig
}

// sourceVersion is the release the source's VERSION file names, with the commit as semantic
// versioning's build metadata ("1.2.0-dev+1a2b3c4", ".dirty" for uncommitted changes); without
// the file (a source older than the first release), git describe.
func sourceVersion(source string) string {
	data, err := os.ReadFile(filepath.Join(source, "VERSION"))
	if err != nil {
		return git(source, "describe", "--tags", "--always", "--dirty")
	}
	v := strings.TrimSpace(string(data))
	if commit := git(source, "rev-parse", "--short", "HEAD"); commit != "" {
		v += "+" + commit
		if git(source, "status", "--porcelain", "--untracked-files=no") != "" {
			v += ".dirty"
		}
	}
	return v
}

// Defaults fills unset options.
func (o *Options) Defaults() {
	if o.Source == "" {
		o.Source = "."
	}
	if o.Commit == "" {
		o.Commit = git(o.Source, "rev-parse", "HEAD")
	}
	if o.Version == "" {
		o.Version = sourceVersion(o.Source)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if o.Pool == "" {
		o.Pool = "master"
	}
	if o.Rollout == "" {
		o.Rollout = RolloutOutOfCluster
	}
	if o.SecretsIn == "" {
		o.SecretsIn = SecretsInSecret
	}
	if o.Store == "" {
		o.Store = DefaultStore
	}
	if o.CacheDir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(d, "tnf-layer")
		}
	}
}

// git is a git command's output in dir, or "" when dir is not a repository.
func git(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// LoadLayer finds the layer definition the options name.
func (o Options) LoadLayer() (layerdef.Layer, error) {
	name := o.Layer
	switch {
	case o.OCP != "" && o.Layer != "":
		return layerdef.Layer{}, fmt.Errorf("--ocp and --layer exclude each other")
	case o.OCP != "":
		name = "ocp-" + o.OCP
	case o.Layer == "":
		return layerdef.Layer{}, fmt.Errorf("--ocp VERSION or --layer NAME is needed")
	}
	if strings.ContainsAny(name, "/\\") {
		return layerdef.Layer{}, fmt.Errorf("--layer: %q is not a layer name", name)
	}
	file := path.Join("layers", name+".yaml")
	var data []byte
	var err error
	if o.LayersDir != "" {
		file = path.Join(o.LayersDir, name+".yaml")
		data, err = os.ReadFile(file)
	} else {
		data, err = fs.ReadFile(tnflayer.Layers, file)
	}
	if err != nil {
		return layerdef.Layer{}, fmt.Errorf("no layer definition %s (known: %s)", file, strings.Join(knownLayers(), ", "))
	}
	return layerdef.Parse(file, data)
}

// modulePath is the module build-layer compiles the agents from.
const modulePath = "github.com/tnf-layer/tnf-layer"

// CheckSource says whether --source is a checkout of the module the agents are compiled from:
// outside one, go build would fail with its own words, which name no flag.
func (o Options) CheckSource() error {
	file := filepath.Join(o.Source, "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("--source %s: no go.mod: build-layer compiles the agents from a checkout of %s; run it in one, or give its folder with --source", o.Source, modulePath)
	}
	if got := modfile.ModulePath(data); got != modulePath {
		return fmt.Errorf("--source %s: %s is module %q, not %s", o.Source, file, got, modulePath)
	}
	return nil
}

func knownLayers() []string {
	names, _ := fs.Glob(tnflayer.Layers, "layers/*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(path.Base(n), ".yaml")
	}
	return names
}
