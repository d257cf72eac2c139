package layerdef

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"

	tnflayer "github.com/tnf-layer/tnf-layer"
)

func TestShippedLayersParse(t *testing.T) {
	names, err := fs.Glob(tnflayer.Layers, "layers/*.yaml")
	if err != nil || len(names) != 6 {
		t.Fatalf("layers: %v %v", names, err)
	}
	// The etcd each release ships: 3.6 from 4.21 on (openshift/etcd openshift-4.21 and -4.22: 3.6.5).
	etcd := map[string]string{"ocp-4.18": "3.5", "ocp-4.19": "3.5", "ocp-4.20": "3.5", "ocp-4.21": "3.6", "ocp-4.22": "3.6"}
	// The newest Ignition spec each release's MCO accepts: 3.5 from 4.19 on
	// (openshift/machine-config-operator #4903).
	ignition := map[string]string{"ocp-4.18": "3.4.0", "ocp-4.19": "3.5.0", "ocp-4.20": "3.5.0", "ocp-4.21": "3.5.0", "ocp-4.22": "3.5.0"}
	for _, n := range names {
		data, _ := fs.ReadFile(tnflayer.Layers, n)
		l, err := Parse(n, data)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(strings.TrimPrefix(n, "layers/"), ".yaml"); l.Name != want {
			t.Errorf("%s: name %q, want %q", n, l.Name, want)
		}
		if l.Release != nil && l.Release.Etcd != etcd[l.Name] {
			t.Errorf("%s: release.etcd %q, want %q", n, l.Release.Etcd, etcd[l.Name])
		}
		if l.Release != nil && l.Release.Ignition != ignition[l.Name] {
			t.Errorf("%s: release.ignition %q, want %q", n, l.Release.Ignition, ignition[l.Name])
		}
		if got := l.Binaries(); len(got) < 3 {
			t.Errorf("%s: binaries %v", n, got)
		}
	}
}

func TestBadLayers(t *testing.T) {
	good := `name: x
kind: rhcos
release: {version: "4.19", image: quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64, etcd: "3.5", ignition: "3.5.0"}
os: {id: rhel, version: "9.6"}
packages: {source: rhcos-extensions, names: [pacemaker], command: dnf, extension: two-node-ha}
files: [{from: bin/tnfctl, to: /usr/bin/tnfctl, mode: "0755"}]
images: [{name: localhost/tnf/etcd:v1, binary: bin/etcd}]
enable: [corosync.service, tnf-auto-unblock.timer]
finalize: bootc-lint
`
	l, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Binaries(); !reflect.DeepEqual(got, []string{"etcd", "tnfctl"}) {
		t.Errorf("binaries %v: an image's binary is one", got)
	}
	rows := []struct{ old, new, want string }{
		{"name: x", "name: x\nflavour: spicy", `unknown field "flavour"`},
		{"kind: rhcos", "kind: fedora", "kind"},
		{`version: "4.19"`, `version: "four"`, "release.version"},
		{"image: quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64", "image: 'not an image'", "release.image"},
		{`etcd: "3.5"`, `etcd: "3.4"`, "release.etcd"},
		{`ignition: "3.5.0"`, `ignition: "3.6.0"`, "release.ignition"},
		{`, ignition: "3.5.0"`, ``, "release.ignition"},
		{`, etcd: "3.5"`, ``, "release.etcd"},
		{"source: rhcos-extensions", "source: apt", "packages.source"},
		{"names: [pacemaker]", "names: []", "packages.names"},
		{"names: [pacemaker]", "names: ['rm -rf /']", "packages.names[0]"},
		{"command: dnf", "command: yum", "packages.command"},
		{"command: dnf, ", "", "packages.command"},
		{"extension: two-node-ha", "extension: Two_Node", "packages.extension"},
		{"to: /usr/bin/tnfctl", "to: /opt/tnf/tnfctl", "files[0].to"},
		{"to: /usr/bin/tnfctl", "to: /usr/local/bin/tnfctl", "files[0].to"},
		{"from: bin/tnfctl", "from: ../secrets", "files[0].from"},
		{`mode: "0755"`, `mode: "rwx"`, "files[0].mode"},
		{"finalize: bootc-lint", "finalize: maybe", "finalize"},
		{"name: localhost/tnf/etcd:v1", "name: localhost/tnf/etcd", "images[0].name"},
		{"name: localhost/tnf/etcd:v1", "name: 'etcd:v1'", "images[0].name"},
		{"binary: bin/etcd", "binary: cmd/etcd", "images[0].binary"},
		{"{name: localhost/tnf/etcd:v1, binary: bin/etcd}", "{name: localhost/tnf/etcd:v1, binary: bin/etcd}, {name: localhost/tnf/etcd:v1, binary: bin/etcdctl}", "images[1].name"},
		{"os: {id: rhel, version: \"9.6\"}", "os: {id: rhel}", "os"},
		{"enable: [corosync.service, tnf-auto-unblock.timer]", "enable: []", "enable: empty"},
		{"enable: [corosync.service, tnf-auto-unblock.timer]", "enable: [corosync]", "enable[0]"},
		{"enable: [corosync.service, tnf-auto-unblock.timer]", "enable: [corosync.service, kubelet.service]", "enable[1]: kubelet.service is started by Pacemaker only"},
		{"enable: [corosync.service, tnf-auto-unblock.timer]", "enable: [crio.service]", "enable[0]: crio.service"},
		{"enable: [corosync.service, tnf-auto-unblock.timer]", "enable: [corosync.service, corosync.service]", "enable[1]"},
	}
	for _, r := range rows {
		_, err := Parse("bad.yaml", []byte(strings.Replace(good, r.old, r.new, 1)))
		if err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%q → %q: error %v, want one naming bad.yaml and %s", r.old, r.new, err, r.want)
		}
	}
}
