// Package layerdef reads the layer definitions in layers/: one per OpenShift release and the lab
// default. Parsing is strict: an unknown field or a bad value is an error naming file and field.
package layerdef

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Layer is one layer definition.
type Layer struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"` // rhcos or lab
	Release  *Release `json:"release,omitempty"`
	Base     string   `json:"base,omitempty"` // lab: the base image
	OS       OS       `json:"os"`
	Packages Packages `json:"packages"`
	Files    []File   `json:"files"`
	Images   []Image  `json:"images,omitempty"`
	// Enable are the units the image enables itself (links in its /etc): a node receives the
	// layer as an update, never on a first boot, so presets would never run.
	Enable   []string `json:"enable"`
	Finalize string   `json:"finalize"` // bootc-lint, ostree-commit or none
}

// PacemakerOnly are the units only Pacemaker may start: no layer enables them, and the layer's
// drop-ins keep anyone else from starting them.
var PacemakerOnly = []string{"crio.service", "kubelet.service"}

// ImageStore is where a layer's preloaded images live in it: a read-only container store that
// podman reads as an additional image store (storage.conf's additionalimagestores).
const ImageStore = "/usr/lib/containers/storage"

// ImageStorePath is where the layer's preloaded images go: ImageStore, or "" for none.
func (l Layer) ImageStorePath() string {
	if len(l.Images) == 0 {
		return ""
	}
	return ImageStore
}

// Image is a container image holding one of our binaries (at /usr/bin/NAME), preloaded into
// the layer's ImageStore, so that podman runs it on a node that reaches no registry.
type Image struct {
	Name   string `json:"name"`   // the name pod manifests use, with a tag
	Binary string `json:"binary"` // bin/NAME
}

// Release is the OpenShift release the base comes from.
type Release struct {
	Version string `json:"version"`
	Image   string `json:"image"`
	// Etcd is the etcd minor version of the release's etcd image, which the agent's podman
	// runtime runs; the agent is tested on each of EtcdVersions.
	Etcd string `json:"etcd"`
	// Ignition is the newest Ignition spec the release's MCO accepts in a MachineConfig, one of
	// IgnitionVersions: the node configuration MachineConfig carries that spec.
	Ignition string `json:"ignition"`
}

// IgnitionVersions are the Ignition specs the node configuration can be rendered in.
var IgnitionVersions = []string{"3.4.0", "3.5.0"}

// LabIgnition is the lab layer's Ignition spec (no MCO reads it).
const LabIgnition = "3.5.0"

// IgnitionVersion is the Ignition spec of the layer's node configuration MachineConfig.
func (l Layer) IgnitionVersion() string {
	if l.Release == nil {
		return LabIgnition
	}
	return l.Release.Ignition
}

// EtcdVersions are the etcd minor versions the agent is tested on (make test: tools/etcd-3.6
// beside cmd/etcd).
var EtcdVersions = []string{"3.5", "3.6"}

// OS is the base's operating system.
type OS struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// Packages is the package set and where it comes from.
type Packages struct {
	Source string   `json:"source"` // rhcos-extensions or apt
	Names  []string `json:"names"`
	// Command installs them in the layer (rhcos): dnf or rpm-ostree, whichever the release's
	// RHCOS supports in a container build (the definition cites its source).
	Command string `json:"command,omitempty"`
	// Extension is the RHCOS extension that ships Names with the release itself (rhcos), named in
	// a MachineConfig's spec.extensions for the on-cluster rollout; empty: the release has none,
	// and only the out-of-cluster rollout can carry the packages.
	Extension string `json:"extension,omitempty"`
}

// Package commands of an RHCOS layer.
const (
	CommandDNF       = "dnf"
	CommandRPMOSTree = "rpm-ostree"
)

// File is one of our files: From is a build output ("bin/NAME", compiled for the target) or a
// path in the repository; To is where it goes in the image.
type File struct {
	From string `json:"from"`
	To   string `json:"to"`
	Mode string `json:"mode"`
}

// ModeBits is the file's mode.
func (f File) ModeBits() uint32 {
	m, _ := strconv.ParseUint(f.Mode, 8, 32)
	return uint32(m)
}

var (
	packageName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9.+_-]*$`)
	imageRef    = regexp.MustCompile(`^[a-z0-9][a-z0-9.:/_-]*(:[a-zA-Z0-9_][a-zA-Z0-9._-]*)?(@sha256:[0-9a-f]{64})?$`)
	version     = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	taggedName  = regexp.MustCompile(`^[^@]*/[^/@]*:[a-zA-Z0-9_][a-zA-Z0-9._-]*$`)
	// extensionName is the form of MCO's extension names (two-node-ha, kernel-devel).
	extensionName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	unitName      = regexp.MustCompile(`^[a-zA-Z0-9:_.@\\-]+\.(service|timer|socket|path|target)$`)
)

// Parse reads one definition; file names it in errors.
func Parse(file string, data []byte) (Layer, error) {
	var l Layer
	if err := yaml.UnmarshalStrict(data, &l); err != nil {
		return Layer{}, fmt.Errorf("%s: %w", file, err)
	}
	if err := l.validate(); err != nil {
		return Layer{}, fmt.Errorf("%s: %w", file, err)
	}
	return l, nil
}

func (l Layer) validate() error {
	if l.Name == "" {
		return fmt.Errorf("name: missing")
	}
	switch l.Kind {
	case "rhcos":
		if l.Release == nil {
			return fmt.Errorf("release: missing for kind rhcos")
		}
		if !version.MatchString(l.Release.Version) {
			return fmt.Errorf("release.version: %q is not MAJOR.MINOR", l.Release.Version)
		}
		if !imageRef.MatchString(l.Release.Image) {
			return fmt.Errorf("release.image: %q is not an image reference", l.Release.Image)
		}
		if !slices.Contains(EtcdVersions, l.Release.Etcd) {
			return fmt.Errorf("release.etcd: %q is not one of the etcd versions the agent is tested on (%s)", l.Release.Etcd, strings.Join(EtcdVersions, ", "))
		}
		if !slices.Contains(IgnitionVersions, l.Release.Ignition) {
			return fmt.Errorf("release.ignition: %q is not one of the Ignition specs the node configuration is rendered in (%s)", l.Release.Ignition, strings.Join(IgnitionVersions, ", "))
		}
		if l.Base != "" {
			return fmt.Errorf("base: kind rhcos takes its base from the release (use --base to override)")
		}
		if l.Packages.Source != "rhcos-extensions" {
			return fmt.Errorf("packages.source: kind rhcos installs from rhcos-extensions, not %q", l.Packages.Source)
		}
		if l.Packages.Command != CommandDNF && l.Packages.Command != CommandRPMOSTree {
			return fmt.Errorf("packages.command: %q is neither %s nor %s", l.Packages.Command, CommandDNF, CommandRPMOSTree)
		}
		if l.Packages.Extension != "" && !extensionName.MatchString(l.Packages.Extension) {
			return fmt.Errorf("packages.extension: %q is not an extension name", l.Packages.Extension)
		}
	case "lab":
		if l.Release != nil {
			return fmt.Errorf("release: kind lab has no release")
		}
		if !imageRef.MatchString(l.Base) {
			return fmt.Errorf("base: %q is not an image reference", l.Base)
		}
		if l.Packages.Source != "apt" {
			return fmt.Errorf("packages.source: kind lab installs with apt, not %q", l.Packages.Source)
		}
		if l.Packages.Command != "" || l.Packages.Extension != "" {
			return fmt.Errorf("packages: command and extension are for kind rhcos (kind lab installs with apt)")
		}
	default:
		return fmt.Errorf("kind: %q is neither rhcos nor lab", l.Kind)
	}
	if l.OS.ID == "" || l.OS.Version == "" {
		return fmt.Errorf("os: id and version are needed")
	}
	if len(l.Packages.Names) == 0 {
		return fmt.Errorf("packages.names: empty")
	}
	for i, p := range l.Packages.Names {
		if !packageName.MatchString(p) {
			return fmt.Errorf("packages.names[%d]: %q is not a package name", i, p)
		}
	}
	seen := map[string]bool{}
	for i, f := range l.Files {
		field := fmt.Sprintf("files[%d]", i)
		if f.From == "" || path.IsAbs(f.From) || strings.Contains(f.From, "..") {
			return fmt.Errorf("%s.from: %q must be a path inside the repository (or bin/NAME)", field, f.From)
		}
		to := path.Clean(f.To)
		if !strings.HasPrefix(to, "/usr/") || strings.HasPrefix(to, "/usr/local/") {
			return fmt.Errorf("%s.to: %q must be under /usr (not /usr/local): on RHCOS /opt and /usr/local live in /var", field, f.To)
		}
		if seen[to] {
			return fmt.Errorf("%s.to: %q is written twice", field, f.To)
		}
		seen[to] = true
		if m, err := strconv.ParseUint(f.Mode, 8, 32); err != nil || m > 0o7777 || len(f.Mode) != 4 {
			return fmt.Errorf("%s.mode: %q is not a four-digit octal mode", field, f.Mode)
		}
	}
	names := map[string]bool{}
	for i, img := range l.Images {
		field := fmt.Sprintf("images[%d]", i)
		if !imageRef.MatchString(img.Name) || !taggedName.MatchString(img.Name) {
			return fmt.Errorf("%s.name: %q is not an image name with a tag", field, img.Name)
		}
		if names[img.Name] {
			return fmt.Errorf("%s.name: %q is listed twice", field, img.Name)
		}
		names[img.Name] = true
		if name, ok := strings.CutPrefix(img.Binary, "bin/"); !ok || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("%s.binary: %q is not bin/NAME", field, img.Binary)
		}
	}
	if len(l.Enable) == 0 {
		return fmt.Errorf("enable: empty (the units the image enables; nothing else starts them on a node that receives the layer as an update)")
	}
	enabled := map[string]bool{}
	for i, u := range l.Enable {
		field := fmt.Sprintf("enable[%d]", i)
		switch {
		case !unitName.MatchString(u):
			return fmt.Errorf("%s: %q is not a unit name", field, u)
		case slices.Contains(PacemakerOnly, u):
			return fmt.Errorf("%s: %s is started by Pacemaker only, never enabled", field, u)
		case enabled[u]:
			return fmt.Errorf("%s: %s is listed twice", field, u)
		}
		enabled[u] = true
	}
	switch l.Finalize {
	case "bootc-lint", "ostree-commit", "none":
	default:
		return fmt.Errorf("finalize: %q is not bootc-lint, ostree-commit or none", l.Finalize)
	}
	return nil
}

// Binaries are the bin/NAME outputs the layer needs (its files' and its images'), sorted.
func (l Layer) Binaries() []string {
	seen := map[string]bool{}
	from := make([]string, 0, len(l.Files)+len(l.Images))
	for _, f := range l.Files {
		from = append(from, f.From)
	}
	for _, img := range l.Images {
		from = append(from, img.Binary)
	}
	var out []string
	for _, f := range from {
		if name, ok := strings.CutPrefix(f, "bin/"); ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// The image labels every layer carries; build-layer verify checks them.
const (
	LabelLayer   = "io.tnf-layer.layer"         // the layer definition's name
	LabelVersion = "io.tnf-layer.version"       // the layer version (also in the agents)
	LabelCommit  = "io.tnf-layer.source-commit" // the source the agents were compiled from
	LabelRelease = "io.tnf-layer.release"       // the OpenShift release (RHCOS layers): exact when read from its payload
)

// Labels are the layer's image labels for a build of version from commit on release, the exact
// release its payload names ("4.19.7"; "" when not read: the definition's minor release).
func (l Layer) Labels(version, commit, release string) map[string]string {
	labels := map[string]string{LabelLayer: l.Name, LabelVersion: version, LabelCommit: commit}
	if l.Release != nil {
		labels[LabelRelease] = l.Release.Version
		if release != "" {
			labels[LabelRelease] = release
		}
	}
	return labels
}

// OfRelease says an exact release (or the minor itself) belongs to the definition's release:
// "4.19.7" and "4.19" to 4.19, never "4.190.1".
func (l Layer) OfRelease(release string) bool {
	return l.Release != nil && (release == l.Release.Version || strings.HasPrefix(release, l.Release.Version+"."))
}
