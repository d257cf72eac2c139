// Package verify checks a built layer image against its definition: every file the layer
// promises is there with its mode, the HA stack's commands are installed, no layer carries
// secret material, every preloaded image is in the image store, the labels say which layer,
// version, source and release it is, and a node receiving it as an update would start what it
// should and nothing else (enablement links, tmpfiles entries, unit drop-ins).
//
// A Checker sees the image's tar entries one by one (what imageread.Reader.Walk yields) and its
// metadata; it does no I/O of its own, so its rules are tested on hand-made layers.
package verify

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/build/containerfile"
	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

// haCommands are what the two-node-ha package set installs and the nodes run, on RHEL and
// Debian alike.
var haCommands = []string{"usr/sbin/corosync", "usr/sbin/pacemakerd", "usr/sbin/pcs", "usr/sbin/crm_attribute",
	"usr/sbin/cibadmin", "usr/sbin/fence_redfish"}

// entry is what the image's merged filesystem holds at a path.
type entry struct {
	layer    int
	typeflag byte
	mode     int64
	uid, gid int
	link     string
	content  string // unit drop-ins only: what unitRules read
}

// Checker collects findings over an image's layers.
type Checker struct {
	layer    layerdef.Layer
	tree     map[string]entry // the merged filesystem so far
	images   map[string]bool  // the names in the image store's newest images.json
	findings []string
}

// storeImages is the image store's list of images (containers/storage's own record).
var storeImages = clean(layerdef.ImageStore + "/overlay-images/images.json")

// New checks an image against layer definition l.
func New(l layerdef.Layer) *Checker {
	return &Checker{layer: l, tree: map[string]entry{}}
}

func clean(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// Entry takes one tar entry of layer number layer (an imageread.EntryFunc).
func (c *Checker) Entry(layer int, hdr *tar.Header, r io.Reader) error {
	name := clean(hdr.Name)
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case base == ".wh..wh..opq":
		// An opaque directory hides what lower layers put in it.
		for p, e := range c.tree {
			if e.layer < layer && strings.HasPrefix(p, dir+"/") {
				delete(c.tree, p)
			}
		}
		return nil
	case strings.HasPrefix(base, ".wh."):
		gone := path.Join(dir, strings.TrimPrefix(base, ".wh."))
		for p := range c.tree {
			if p == gone || strings.HasPrefix(p, gone+"/") {
				delete(c.tree, p)
			}
		}
		return nil
	}
	e := entry{layer: layer, typeflag: hdr.Typeflag, mode: hdr.Mode & 0o7777, uid: hdr.Uid, gid: hdr.Gid, link: hdr.Linkname}
	if hdr.Typeflag == tar.TypeReg && dropIn.MatchString(name) {
		data, err := io.ReadAll(io.LimitReader(r, 64<<10))
		if err != nil {
			return err
		}
		e.content = string(data)
		r = bytes.NewReader(data)
	}
	c.tree[name] = e
	if name == storeImages && hdr.Typeflag == tar.TypeReg {
		var records []struct {
			Names []string `json:"names"`
		}
		if err := json.NewDecoder(r).Decode(&records); err != nil {
			c.findf("layer %d: /%s: %v", layer, name, err)
			return nil
		}
		c.images = map[string]bool{}
		for _, rec := range records {
			for _, n := range rec.Names {
				c.images[n] = true
			}
		}
		return nil
	}
	// A secret in any layer is in the image, whatever a later layer does with it.
	if why := secretPath(name); why != "" && hdr.Typeflag != tar.TypeDir {
		c.findf("layer %d: /%s: %s", layer, name, why)
	} else if hdr.Typeflag == tar.TypeReg && !testFixture.MatchString(name) && privateKey(r) {
		c.findf("layer %d: /%s: a PEM private key", layer, name)
	}
	return nil
}

var secretFiles = []struct {
	pattern *regexp.Regexp
	why     string
}{
	{regexp.MustCompile(`^etc/tnf/secrets/`), "node secrets belong in the node configuration MachineConfig"},
	{regexp.MustCompile(`\.password$`), "a password file"},
	{regexp.MustCompile(`^etc/(corosync|pacemaker)/authkey$`), "a cluster authentication key (each cluster makes its own)"},
	{regexp.MustCompile(`^etc/ssh/ssh_host_[a-z0-9]+_key$`), "an SSH host key (every node would share it)"},
	{regexp.MustCompile(`^etc/corosync/corosync\.conf$`), "a cluster configuration (corosync would start with it at first boot, before tnfctl setup writes the cluster's)"},
	{regexp.MustCompile(`(^|/)\.docker/config\.json$|(^|/)auth\.json$|\.dockerconfigjson$`), "registry credentials"},
}

func secretPath(name string) string {
	for _, s := range secretFiles {
		if s.pattern.MatchString(name) {
			return s.why
		}
	}
	return ""
}

// privateKey reports whether a file starts like a PEM private key. Only the start counts:
// libraries carry the PEM markers as strings.
func privateKey(r io.Reader) bool {
	head, _ := io.ReadAll(io.LimitReader(r, 512))
	line, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte("\n"))
	return bytes.HasPrefix(line, []byte("-----BEGIN ")) && bytes.Contains(line, []byte("PRIVATE KEY-----"))
}

// testFixture is where Python packages keep their test suites: their keys are public by
// design (tornado ships test/test.key).
var testFixture = regexp.MustCompile(`^usr/lib/python3[^/]*/(dist|site)-packages/([^/]+/)*tests?/`)

var secretName = regexp.MustCompile(`(?i)(passw|secret|token|private_?key|credential)`)

var (
	dropIn   = regexp.MustCompile(`^(usr/lib|etc)/systemd/system/([^/]+)\.d/[^/]+\.conf$`)
	unitLink = regexp.MustCompile(`^(usr/lib|etc)/systemd/system/[^/]+\.(wants|requires)/([^/]+)$`)
)

// unitRules are settings the layer's drop-ins must make, whatever the definition lists.
var unitRules = []struct{ unit, line, why string }{
	{"crio.service", pacemakerStarts("crio.service"), "only Pacemaker may start it"},
	{"kubelet.service", pacemakerStarts("kubelet.service"), "only Pacemaker may start it"},
	{"corosync.service", "After=ovs-configuration.service", "a Corosync started before the host network is final loses its ring"},
}

// pacemakerStarts is the interlock's condition: the runtime drop-in Pacemaker writes just before
// it starts unit. It is a triggering condition ("|") beside one other only (startTriggers).
func pacemakerStarts(unit string) string {
	return "ConditionPathExists=|/run/systemd/system/" + unit + ".d/50-pacemaker.conf"
}

// startTriggers are the triggering conditions the drop-ins of the units only Pacemaker starts may
// have: any one of them lets the unit start, so another would open the interlock. cri-o also
// starts at boot on a guest, whose Pacemaker configuration (the operator's) leaves it to boot.
func startTriggers(unit string) []string {
	triggers := []string{pacemakerStarts(unit), "ConditionPathExists=|" + staticpod.KubeletMarker}
	if unit == "crio.service" {
		triggers = append(triggers, "ConditionPathExists=|"+nodesetup.GuestBootMarker)
	}
	return triggers
}

// checkUpdatePath checks what a node needs that receives the layer as an update, never on a
// first boot: the image enables the definition's units itself, enables none of the units only
// Pacemaker starts, has tmpfiles entries for the packages' /var folders, and carries the drop-ins
// of unitRules.
func (c *Checker) checkUpdatePath() {
	// One pass over the tree: the links enabling each unit, and the lines of the layer's
	// drop-ins (under /usr/lib) for each unit.
	linked := map[string][]string{}
	settings := map[string]map[string]bool{}
	// Every drop-in's lines, /etc's too, for the units only Pacemaker starts: by unit and file.
	pacemakerOnly := map[string]map[string][]string{}
	for p, e := range c.tree {
		if m := unitLink.FindStringSubmatch(p); m != nil && e.typeflag == tar.TypeSymlink {
			linked[m[3]] = append(linked[m[3]], "/"+p)
		}
		m := dropIn.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		lines := unitLines(e.content)
		// A drop-in in /etc hides the one of the same name in /usr/lib.
		if _, hidden := c.tree["etc/systemd/system/"+m[2]+".d/"+path.Base(p)]; m[1] == "usr/lib" && !hidden {
			if settings[m[2]] == nil {
				settings[m[2]] = map[string]bool{}
			}
			for _, l := range lines {
				settings[m[2]][l] = true
			}
		}
		if slices.Contains(layerdef.PacemakerOnly, m[2]) {
			if pacemakerOnly[m[2]] == nil {
				pacemakerOnly[m[2]] = map[string][]string{}
			}
			pacemakerOnly[m[2]]["/"+p] = lines
		}
	}
	for _, u := range c.layer.Enable {
		if len(linked[u]) == 0 {
			c.findf("%s: not enabled by the image (no link in a systemd/system/*.wants folder): a node receiving the layer as an update would not start it", u)
		}
	}
	for _, u := range layerdef.PacemakerOnly {
		for _, p := range linked[u] {
			c.findf("%s: enabled by the image (%s): only Pacemaker starts it", u, p)
		}
	}
	// An update keeps the node's /var: the packages' folders there come from systemd-tmpfiles
	// (containerfile.VarTmpfiles).
	if _, ok := c.tree[clean(containerfile.VarTmpfilesConf)]; !ok {
		c.findf("%s: missing (the packages' /var folders would not exist on a node that receives the layer as an update)", containerfile.VarTmpfilesConf)
	}
	for _, r := range unitRules {
		if !settings[r.unit][r.line] {
			c.findf("%s: no drop-in in /usr/lib/systemd/system/%s.d says %s (%s)", r.unit, r.unit, r.line, r.why)
		}
	}
	for _, u := range layerdef.PacemakerOnly {
		for _, file := range slices.Sorted(maps.Keys(pacemakerOnly[u])) {
			for _, l := range pacemakerOnly[u][file] {
				key, value, _ := strings.Cut(l, "=")
				switch {
				case strings.HasPrefix(key, "Condition") && value == "":
					c.findf("%s: %s says %s: it resets the conditions that keep it to Pacemaker", u, file, l)
				case strings.HasPrefix(key, "Condition") && strings.HasPrefix(value, "|") && !slices.Contains(startTriggers(u), l):
					c.findf("%s: %s says %s: it lets more than Pacemaker start it", u, file, l)
				}
			}
		}
	}
}

// unitLines are a unit file's setting lines as systemd reads them: trimmed, without spaces
// around the first "=", comments and section headers left out.
func unitLines(content string) []string {
	var lines []string
	for _, l := range strings.Split(content, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") || strings.HasPrefix(l, "[") {
			continue
		}
		if key, value, ok := strings.Cut(l, "="); ok {
			l = strings.TrimSpace(key) + "=" + strings.TrimSpace(value)
		}
		lines = append(lines, l)
	}
	return lines
}

// Finish checks the image's metadata and the merged filesystem and returns every finding,
// sorted; none means the image is the layer it claims to be.
func (c *Checker) Finish(img imageread.Image, version string) []string {
	l := c.layer
	want := l.Labels(version, "", "")
	for _, k := range []string{layerdef.LabelLayer, layerdef.LabelVersion, layerdef.LabelCommit, layerdef.LabelRelease} {
		got, ok := img.Labels[k]
		switch {
		case k == layerdef.LabelRelease && l.Release == nil:
		case !ok || got == "":
			c.findf("label %s: missing", k)
		case k == layerdef.LabelRelease:
			if !l.OfRelease(got) {
				c.findf("label %s: %q, want release %s or one of its z-streams", k, got, l.Release.Version)
			}
		case want[k] != "" && got != want[k]:
			c.findf("label %s: %q, want %q", k, got, want[k])
		}
	}
	for _, e := range img.Env {
		if name, value, _ := strings.Cut(e, "="); secretName.MatchString(name) && value != "" {
			c.findf("config: environment variable %s has a value: secrets do not go into images", name)
		}
	}
	for i, h := range img.History {
		if secretName.MatchString(h) && strings.Contains(h, "=") {
			c.findf("history %d: a build step names a secret (%.60s…)", i, h)
		}
	}
	for _, f := range l.Files {
		p := clean(f.To)
		e, ok := c.tree[p]
		switch {
		case !ok:
			c.findf("%s: missing (from %s)", f.To, f.From)
		case e.typeflag != tar.TypeReg:
			c.findf("%s: not a regular file", f.To)
		case uint32(e.mode) != f.ModeBits():
			c.findf("%s: mode %04o, want %s", f.To, e.mode, f.Mode)
		case e.uid != 0 || e.gid != 0:
			c.findf("%s: owner %d:%d, want 0:0", f.To, e.uid, e.gid)
		}
	}
	for _, img := range l.Images {
		if _, ok := c.tree[storeImages]; !ok || !c.images[img.Name] {
			c.findf("image %s: not in %s", img.Name, layerdef.ImageStore)
		}
	}
	for _, cmd := range haCommands {
		if !c.exists(cmd) {
			c.findf("/%s: missing (the two-node-ha packages: %s)", cmd, strings.Join(l.Packages.Names, " "))
		}
	}
	c.checkNoDocs()
	c.checkUpdatePath()
	sort.Strings(c.findings)
	return c.findings
}

// checkNoDocs: the layer's packages come without documentation (example keys came with it once;
// dnf's tsflags=nodocs, rpm's %_excludedocs, Debian's dpkg path-exclude), so their documentation
// folders hold nothing but the copyright file Debian keeps.
func (c *Checker) checkNoDocs() {
	for _, pkg := range c.layer.Packages.Names {
		dir := "usr/share/doc/" + pkg + "/"
		for p, e := range c.tree {
			if strings.HasPrefix(p, dir) && e.typeflag != tar.TypeDir && path.Base(p) != "copyright" {
				c.findf("/%s: documentation of package %s (the layer installs its packages without it)", p, pkg)
			}
		}
	}
}

// exists follows symbolic links (merged /usr: /sbin → usr/sbin) a few levels deep.
func (c *Checker) exists(p string) bool {
	for range 8 {
		if e, ok := c.tree[p]; ok {
			if e.typeflag != tar.TypeSymlink {
				return true
			}
			target := e.link
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(p), target)
			}
			p = clean(target)
			continue
		}
		// A symlinked parent directory.
		parts := strings.Split(p, "/")
		found := false
		for i := len(parts) - 1; i > 0 && !found; i-- {
			parent := strings.Join(parts[:i], "/")
			if e, ok := c.tree[parent]; ok && e.typeflag == tar.TypeSymlink {
				target := e.link
				if !path.IsAbs(target) {
					target = path.Join(path.Dir(parent), target)
				}
				p = clean(path.Join(target, strings.Join(parts[i:], "/")))
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return false
}

func (c *Checker) findf(format string, args ...any) {
	c.findings = append(c.findings, fmt.Sprintf(format, args...))
}
