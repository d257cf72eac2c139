// Package containerfile renders the top-level Containerfile template from typed inputs.
package containerfile

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"

	tnflayer "github.com/tnf-layer/tnf-layer"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

// Tree is the folder of the build context that holds our files at their destination paths.
const Tree = "tree"

// ImageStore is the folder of the build context that holds the preloaded images' store.
const ImageStore = "image-store"

// Inputs are everything the Containerfile depends on.
type Inputs struct {
	Base          string // digest-pinned
	Extensions    string // digest-pinned rhel-coreos-extensions image (rhcos-extensions only)
	PackageSource string // rhcos-extensions or apt
	// PackageCommand installs from rhcos-extensions: dnf or rpm-ostree (layerdef).
	PackageCommand string
	Packages       []string
	Labels         map[string]string
	Finalize       string   // bootc-lint, ostree-commit or none
	Enable         []string // units the image enables (systemctl enable)
	// ImageStore is where the context's ImageStore folder goes in the image; empty: the layer
	// preloads no image.
	ImageStore string
}

type label struct{ Key, Value string }

var digestRef = regexp.MustCompile(`^[a-z0-9][a-z0-9.:/_-]*@sha256:[0-9a-f]{64}$`)

// Pinned reports whether an image reference is pinned by digest.
func Pinned(ref string) bool { return digestRef.MatchString(ref) }

// varDirs lists the folders in /var, sorted.
const varDirs = "find /var -xdev -type d | sort"

// VarBefore and VarTmpfiles wrap a package installation. An image update never brings /var: the
// node keeps its own (rpm-ostree and bootc unpack an image's /var at install only), so the
// folders the packages make there (Corosync's and Pacemaker's state and log folders) would be
// missing on a node that receives the layer as an update, and Corosync exits without its state
// folder. VarTmpfiles writes a systemd-tmpfiles entry, with mode and owner, for each folder the
// installation added (not the package managers' own), and systemd-tmpfiles makes them at boot.
const (
	VarBefore   = varDirs + " > /tmp/tnf-var-before"
	VarTmpfiles = varDirs + " | comm -13 /tmp/tnf-var-before - | { grep -Ev '^/var/(cache|lib/(apt|dpkg|dnf|rpm)|log/apt)(/|$)' || true; } | " +
		"xargs -r -d '\\n' stat -c 'd %n %a %u %g -' > " + VarTmpfilesConf + " && rm /tmp/tnf-var-before"
	// VarTmpfilesConf is where VarTmpfiles writes.
	VarTmpfilesConf = "/usr/lib/tmpfiles.d/tnf-layer-var.conf"
)

// installFromExtensions is the RUN step that installs packages with command (layerdef's dnf or
// rpm-ostree) from the RPM repository inside an rhel-coreos-extensions image (bind-mounted from
// mountFrom), with no entitlement and without documentation: dnf takes nodocs as an option,
// rpm-ostree has none and follows librpm's %_excludedocs macro, set for the step only.
func installFromExtensions(mountFrom, command string, packages []string) string {
	const repo = "/etc/yum.repos.d/tnf-extensions.repo"
	install := "dnf install -y --setopt=tsflags=nodocs " + strings.Join(packages, " ") + " && dnf clean all && rm " + repo
	if command == layerdef.CommandRPMOSTree {
		const macros = "/etc/rpm/macros.tnf-nodocs"
		install = "printf '%%_excludedocs 1\\n' > " + macros + " && rpm-ostree install " + strings.Join(packages, " ") +
			" && rm " + repo + " " + macros
	}
	return "RUN --mount=type=bind,from=" + mountFrom + ",source=/usr/share/rpm-ostree/extensions,target=/run/tnf-extensions \\\n" +
		`    printf '[tnf-extensions]\nbaseurl=file:///run/tnf-extensions\nenabled=1\ngpgcheck=0\n' > ` + repo + ` && \` + "\n" +
		"    " + VarBefore + " && \\\n" +
		"    " + install + " && \\\n" +
		"    " + VarTmpfiles + " && \\\n" +
		"    " + RemoveClusterKeys
}

// RemoveClusterKeys removes the keys a package may generate at install time (Debian's pacemaker
// makes /etc/pacemaker/authkey): in an image, every node of every cluster would share them.
// tnfctl setup installs the cluster's own.
const RemoveClusterKeys = "rm -f /etc/pacemaker/authkey /etc/corosync/authkey"

var funcs = template.FuncMap{"join": strings.Join, "installFromExtensions": installFromExtensions,
	"removeClusterKeys": func() string { return RemoveClusterKeys },
	"varBefore":         func() string { return VarBefore }, "varTmpfiles": func() string { return VarTmpfiles }}

// Render renders the Containerfile.
func Render(in Inputs) (string, error) {
	if !Pinned(in.Base) {
		return "", fmt.Errorf("base %q is not pinned by digest", in.Base)
	}
	if in.PackageSource == "rhcos-extensions" && !Pinned(in.Extensions) {
		return "", fmt.Errorf("extensions image %q is not pinned by digest", in.Extensions)
	}
	if len(in.Enable) == 0 {
		return "", fmt.Errorf("no unit to enable: a node receiving the layer as an update would start nothing")
	}
	tmpl, err := template.New("Containerfile").Funcs(funcs).Parse(tnflayer.ContainerfileTemplate)
	if err != nil {
		return "", err
	}
	labels := make([]label, 0, len(in.Labels))
	for k, v := range in.Labels {
		labels = append(labels, label{k, v})
	}
	sort.Slice(labels, func(i, j int) bool { return labels[i].Key < labels[j].Key })
	var b bytes.Buffer
	err = tmpl.Execute(&b, struct {
		Inputs
		Labels         []label
		Tree           string
		ImageStoreTree string
	}{in, labels, Tree, ImageStore})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}
