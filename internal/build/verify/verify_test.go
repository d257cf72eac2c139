package verify

import (
	"archive/tar"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

var layer = layerdef.Layer{
	Name: "ocp-4.19", Release: &layerdef.Release{Version: "4.19"},
	Packages: layerdef.Packages{Names: []string{"pacemaker"}},
	Files:    []layerdef.File{{From: "bin/tnfctl", To: "/usr/bin/tnfctl", Mode: "0755"}},
	Enable:   []string{"corosync.service"},
}

type file struct {
	layer   int
	name    string
	flag    byte
	mode    int64
	content string
	link    string
}

// good is a layer that passes: merged /usr (sbin → usr/sbin), the HA commands, our file, our
// drop-ins, and the image's link enabling Corosync.
func good() []file {
	fs := []file{{0, "sbin", tar.TypeSymlink, 0o777, "", "usr/sbin"}, {0, "usr/sbin/", tar.TypeDir, 0o755, "", ""}}
	for _, c := range haCommands {
		fs = append(fs, file{1, "./" + c, tar.TypeReg, 0o755, "#!/bin/sh\n", ""})
	}
	return append(fs, file{2, "usr/bin/tnfctl", tar.TypeReg, 0o755, "\x7fELF", ""},
		dropInFile("crio", "[Unit]\nConditionPathExists=|/run/systemd/system/crio.service.d/50-pacemaker.conf\nConditionPathExists=|/run/tnf/installer-kubelet\nConditionPathExists=|/run/tnf/guest\n"),
		dropInFile("kubelet", "# why\n[Unit]\nConditionPathExists=|/run/systemd/system/kubelet.service.d/50-pacemaker.conf\nConditionPathExists=|/run/tnf/installer-kubelet\n"),
		dropInFile("corosync", "[Unit]\nAfter=ovs-configuration.service\nConditionPathExists=/etc/corosync/corosync.conf\n"),
		file{1, "usr/lib/tmpfiles.d/tnf-layer-var.conf", tar.TypeReg, 0o644, "d /var/lib/corosync 755 0 0 -\n", ""},
		file{3, "etc/systemd/system/multi-user.target.wants/corosync.service", tar.TypeSymlink, 0o777, "", "/lib/systemd/system/corosync.service"})
}

func dropInFile(unit, content string) file {
	return file{2, "usr/lib/systemd/system/" + unit + ".service.d/10-tnf.conf", tar.TypeReg, 0o644, content, ""}
}

var labels = map[string]string{layerdef.LabelLayer: "ocp-4.19", layerdef.LabelVersion: "1.0", layerdef.LabelCommit: "abc", layerdef.LabelRelease: "4.19"}

func check(t *testing.T, l layerdef.Layer, files []file, img imageread.Image, version string) []string {
	t.Helper()
	c := New(l)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Typeflag: f.flag, Mode: f.mode, Linkname: f.link, Size: int64(len(f.content))}
		if err := c.Entry(f.layer, hdr, strings.NewReader(f.content)); err != nil {
			t.Fatal(err)
		}
	}
	return c.Finish(img, version)
}

func TestChecker(t *testing.T) {
	withLabels := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range labels {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name    string
		files   []file
		img     imageread.Image
		version string
		want    []string
	}{
		{"good", good(), imageread.Image{Labels: labels}, "", nil},
		{"expected version", good(), imageread.Image{Labels: labels}, "1.0", nil},
		{"other version", good(), imageread.Image{Labels: labels}, "2.0", []string{`label io.tnf-layer.version: "1.0", want "2.0"`}},
		{"no labels", good(), imageread.Image{}, "", []string{
			"label io.tnf-layer.layer: missing", "label io.tnf-layer.release: missing",
			"label io.tnf-layer.source-commit: missing", "label io.tnf-layer.version: missing"}},
		{"other layer and release", good(), imageread.Image{Labels: withLabels(layerdef.LabelLayer, "lab", layerdef.LabelRelease, "4.18")}, "", []string{
			`label io.tnf-layer.layer: "lab", want "ocp-4.19"`, `label io.tnf-layer.release: "4.18", want release 4.19 or one of its z-streams`}},
		{"exact release", good(), imageread.Image{Labels: withLabels(layerdef.LabelRelease, "4.19.7")}, "", nil},
		{"a release that only begins alike", good(), imageread.Image{Labels: withLabels(layerdef.LabelRelease, "4.190.1")}, "", []string{
			`label io.tnf-layer.release: "4.190.1", want release 4.19 or one of its z-streams`}},
		{"empty commit", good(), imageread.Image{Labels: withLabels(layerdef.LabelCommit, "")}, "", []string{"label io.tnf-layer.source-commit: missing"}},
		{"our file missing", slices.DeleteFunc(good(), func(f file) bool { return f.name == "usr/bin/tnfctl" }), imageread.Image{Labels: labels}, "", []string{"/usr/bin/tnfctl: missing (from bin/tnfctl)"}},
		{"our file whited out", append(good(), file{3, "usr/bin/.wh.tnfctl", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/bin/tnfctl: missing (from bin/tnfctl)"}},
		{"opaque dir hides lower layers", append(good(), file{3, "usr/bin/.wh..wh..opq", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/bin/tnfctl: missing (from bin/tnfctl)"}},
		{"wrong mode", append(good(), file{3, "usr/bin/tnfctl", tar.TypeReg, 0o644, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/bin/tnfctl: mode 0644, want 0755"}},
		{"not a file", append(good(), file{3, "usr/bin/tnfctl", tar.TypeSymlink, 0o777, "", "/bin/true"}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/bin/tnfctl: not a regular file"}},
		{"HA command missing", append(good(), file{3, "usr/sbin/.wh.pcs", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/sbin/pcs: missing (the two-node-ha packages: pacemaker)"}},
		{"a node secret, even deleted later", append(good(), file{1, "etc/tnf/secrets/node1.password", tar.TypeReg, 0o600, "pw", ""},
			file{2, "etc/tnf/secrets/.wh.node1.password", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"layer 1: /etc/tnf/secrets/node1.password: node secrets belong in the node configuration MachineConfig"}},
		{"package documentation", append(good(), file{1, "usr/share/doc/pacemaker/README", tar.TypeReg, 0o644, "docs", ""},
			file{1, "usr/share/doc/pacemaker/copyright", tar.TypeReg, 0o644, "GPL", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/share/doc/pacemaker/README: documentation of package pacemaker (the layer installs its packages without it)"}},
		{"corosync authkey", append(good(), file{1, "etc/corosync/authkey", tar.TypeReg, 0o400, "k", ""}), imageread.Image{Labels: labels}, "",
			[]string{"layer 1: /etc/corosync/authkey: a cluster authentication key (each cluster makes its own)"}},
		{"registry credentials", append(good(), file{2, "root/.docker/config.json", tar.TypeReg, 0o600, "{}", ""}), imageread.Image{Labels: labels}, "",
			[]string{"layer 2: /root/.docker/config.json: registry credentials"}},
		{"ssh host key", append(good(), file{1, "etc/ssh/ssh_host_ed25519_key", tar.TypeReg, 0o600, "x", ""}), imageread.Image{Labels: labels}, "",
			[]string{"layer 1: /etc/ssh/ssh_host_ed25519_key: an SSH host key (every node would share it)"}},
		{"packaged corosync.conf", append(good(), file{1, "etc/corosync/corosync.conf", tar.TypeReg, 0o644, "totem {}", ""}), imageread.Image{Labels: labels}, "",
			[]string{"layer 1: /etc/corosync/corosync.conf: a cluster configuration (corosync would start with it at first boot, before tnfctl setup writes the cluster's)"}},
		{"a private key anywhere", append(good(), file{2, "usr/share/x/key.pem", tar.TypeReg, 0o644, "\n-----BEGIN EC PRIVATE KEY-----\nMHc…", ""}),
			imageread.Image{Labels: labels}, "", []string{"layer 2: /usr/share/x/key.pem: a PEM private key"}},
		{"a library naming the PEM marker is fine", append(good(), file{1, "usr/lib/libcrypto.so", tar.TypeReg, 0o644, "\x7fELF…-----BEGIN PRIVATE KEY-----", ""}),
			imageread.Image{Labels: labels}, "", nil},
		{"a Python package's test key is public", append(good(), file{1, "usr/lib/python3/dist-packages/tornado/test/test.key", tar.TypeReg, 0o644, "-----BEGIN PRIVATE KEY-----\n", ""}),
			imageread.Image{Labels: labels}, "", nil},
		{"a key beside Python code is not", append(good(), file{1, "usr/lib/python3/dist-packages/tnf/key.pem", tar.TypeReg, 0o644, "-----BEGIN PRIVATE KEY-----\n", ""}),
			imageread.Image{Labels: labels}, "", []string{"layer 1: /usr/lib/python3/dist-packages/tnf/key.pem: a PEM private key"}},
		{"a certificate is fine", append(good(), file{1, "etc/pki/ca.pem", tar.TypeReg, 0o644, "-----BEGIN CERTIFICATE-----\n", ""}),
			imageread.Image{Labels: labels}, "", nil},
		{"a unit the image does not enable", slices.DeleteFunc(good(), func(f file) bool { return f.flag == tar.TypeSymlink && f.layer == 3 }), imageread.Image{Labels: labels}, "",
			[]string{"corosync.service: not enabled by the image (no link in a systemd/system/*.wants folder): a node receiving the layer as an update would not start it"}},
		{"kubelet enabled by the image", append(good(), file{3, "etc/systemd/system/multi-user.target.wants/kubelet.service", tar.TypeSymlink, 0o777, "", "/usr/lib/systemd/system/kubelet.service"},
			file{1, "usr/lib/systemd/system/multi-user.target.wants/crio.service", tar.TypeSymlink, 0o777, "", "../crio.service"}), imageread.Image{Labels: labels}, "", []string{
			"crio.service: enabled by the image (/usr/lib/systemd/system/multi-user.target.wants/crio.service): only Pacemaker starts it",
			"kubelet.service: enabled by the image (/etc/systemd/system/multi-user.target.wants/kubelet.service): only Pacemaker starts it"}},
		{"interlock missing", append(good(), dropInFile("kubelet", "[Unit]\n# ConditionPathExists=|/run/systemd/system/kubelet.service.d/50-pacemaker.conf\n")), imageread.Image{Labels: labels}, "",
			[]string{"kubelet.service: no drop-in in /usr/lib/systemd/system/kubelet.service.d says ConditionPathExists=|/run/systemd/system/kubelet.service.d/50-pacemaker.conf (only Pacemaker may start it)"}},
		{"interlock opened by another trigger", append(good(), file{4, "usr/lib/systemd/system/crio.service.d/20-other.conf", tar.TypeReg, 0o644, "[Unit]\nConditionPathExists=|/etc/os-release\n", ""}),
			imageread.Image{Labels: labels}, "",
			[]string{"crio.service: /usr/lib/systemd/system/crio.service.d/20-other.conf says ConditionPathExists=|/etc/os-release: it lets more than Pacemaker start it"}},
		{"the guest's trigger on kubelet", append(good(), file{4, "usr/lib/systemd/system/kubelet.service.d/20-other.conf", tar.TypeReg, 0o644, "[Unit]\nConditionPathExists=|/run/tnf/guest\n", ""}),
			imageread.Image{Labels: labels}, "",
			[]string{"kubelet.service: /usr/lib/systemd/system/kubelet.service.d/20-other.conf says ConditionPathExists=|/run/tnf/guest: it lets more than Pacemaker start it"}},
		{"interlock opened in /etc, spaced", append(good(), file{4, "etc/systemd/system/kubelet.service.d/20-other.conf", tar.TypeReg, 0o644, "[Unit]\nConditionPathExists = |/etc/os-release\n", ""}),
			imageread.Image{Labels: labels}, "",
			[]string{"kubelet.service: /etc/systemd/system/kubelet.service.d/20-other.conf says ConditionPathExists=|/etc/os-release: it lets more than Pacemaker start it"}},
		{"interlock hidden by /etc", append(good(), file{4, "etc/systemd/system/kubelet.service.d/10-tnf.conf", tar.TypeReg, 0o644, "[Unit]\n", ""}),
			imageread.Image{Labels: labels}, "",
			[]string{"kubelet.service: no drop-in in /usr/lib/systemd/system/kubelet.service.d says ConditionPathExists=|/run/systemd/system/kubelet.service.d/50-pacemaker.conf (only Pacemaker may start it)"}},
		{"interlock reset", append(good(), file{4, "usr/lib/systemd/system/crio.service.d/20-other.conf", tar.TypeReg, 0o644, "[Unit]\nConditionPathExists=\n", ""}),
			imageread.Image{Labels: labels}, "",
			[]string{"crio.service: /usr/lib/systemd/system/crio.service.d/20-other.conf says ConditionPathExists=: it resets the conditions that keep it to Pacemaker"}},
		{"ordering drop-in whited out", append(good(), file{4, "usr/lib/systemd/system/corosync.service.d/.wh.10-tnf.conf", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"corosync.service: no drop-in in /usr/lib/systemd/system/corosync.service.d says After=ovs-configuration.service (a Corosync started before the host network is final loses its ring)"}},
		{"no tmpfiles entries for the packages' /var", append(good(), file{4, "usr/lib/tmpfiles.d/.wh.tnf-layer-var.conf", tar.TypeReg, 0, "", ""}), imageread.Image{Labels: labels}, "",
			[]string{"/usr/lib/tmpfiles.d/tnf-layer-var.conf: missing (the packages' /var folders would not exist on a node that receives the layer as an update)"}},
		{"secret in the environment", good(), imageread.Image{Labels: labels, Env: []string{"PATH=/usr/bin", "BMC_PASSWORD=hunter2", "TOKEN="}}, "",
			[]string{"config: environment variable BMC_PASSWORD has a value: secrets do not go into images"}},
		{"secret in a build step", good(), imageread.Image{Labels: labels, History: []string{"RUN apt-get install -y pcs", "ARG PULL_SECRET=abc"}}, "",
			[]string{"history 1: a build step names a secret (ARG PULL_SECRET=abc…)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, layer, tt.files, tt.img, tt.version)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// TestFindingsHoldNoSecret: a finding names where a secret is, never what it is.
func TestFindingsHoldNoSecret(t *testing.T) {
	files := append(good(), file{1, "etc/tnf/secrets/n.password", tar.TypeReg, 0o600, "hunter2", ""},
		file{1, "k.pem", tar.TypeReg, 0o600, "-----BEGIN PRIVATE KEY-----\nhunter2", ""})
	got := check(t, layer, files, imageread.Image{Labels: labels, Env: []string{"PASSWORD=hunter2"}}, "")
	if len(got) != 3 || strings.Contains(strings.Join(got, "\n"), "hunter2") {
		t.Fatalf("%q", got)
	}
}

// TestPreloadedImages: each image of the definition must be named in the image store's own
// record, as the newest layer left it.
func TestPreloadedImages(t *testing.T) {
	l := layer
	l.Images = []layerdef.Image{{Name: "localhost/tnf/etcd:v1", Binary: "bin/etcd"}}
	store := strings.TrimPrefix(layerdef.ImageStore, "/") + "/overlay-images/images.json"
	record := func(layer int, content string) file { return file{layer, store, tar.TypeReg, 0o644, content, ""} }
	missing := []string{"image localhost/tnf/etcd:v1: not in /usr/lib/containers/storage"}
	tests := []struct {
		name  string
		files []file
		want  []string
	}{
		{"in the store", append(good(), record(2, `[{"id":"f7","names":["localhost/tnf/etcd:v1"]}]`)), nil},
		{"no store", good(), missing},
		{"another image", append(good(), record(2, `[{"id":"f7","names":["localhost/tnf/etcd:v0"]}]`)), missing},
		{"replaced by a later layer", append(good(), record(2, `[{"names":["localhost/tnf/etcd:v1"]}]`), record(3, `[]`)), missing},
		{"whited out", append(good(), record(2, `[{"names":["localhost/tnf/etcd:v1"]}]`),
			file{3, strings.TrimSuffix(store, "images.json") + ".wh.images.json", tar.TypeReg, 0, "", ""}), missing},
		{"not a record", append(good(), record(2, `{`)), append(missing, "layer 2: /"+store+": unexpected EOF")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := check(t, l, tt.files, imageread.Image{Labels: labels}, ""); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}
