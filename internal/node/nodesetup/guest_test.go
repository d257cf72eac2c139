package nodesetup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorConfigured reads the files the cluster-etcd-operator's setup job leaves, made by the
// same pcs commands it runs (pkg/tnf/pkg/pcs), offline: its corosync.conf, and a CIB with its
// etcd resource through the field's agent (not installed here, hence --force).
func TestOperatorConfigured(t *testing.T) {
	dir := t.TempDir()
	run := func(argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, text string) string {
		t.Helper()
		if err := os.WriteFile(path(name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path(name)
	}
	run("pcs", "cluster", "setup", "TNF", "master-0", "addr=192.0.2.10", "master-1", "addr=192.0.2.11", "--corosync_conf", path("operator-corosync.conf"))
	cib, err := exec.Command("cibadmin", "--empty").Output()
	if err != nil {
		t.Fatal(err)
	}
	write("operator-cib.xml", string(cib))
	run("pcs", "-f", path("operator-cib.xml"), "resource", "create", "etcd", "ocf:heartbeat:podman-etcd",
		"node_ip_map=master-0:192.0.2.10;master-1:192.0.2.11", "drop_in_dependency=true", "clone", "interleave=true", "notify=true", "--force")
	write("empty-cib.xml", string(cib))
	missing := path("missing")
	rows := []struct {
		name, conf, cib, want, err string
	}{
		{"nothing yet", missing, missing, "", ""},
		{"the layer's own cluster", write("own.conf", "totem {\n    version: 2\n    cluster_name: edge-042\n}\n"), path("empty-cib.xml"), "", ""},
		{"the operator's corosync.conf", path("operator-corosync.conf"), missing, `names cluster "TNF", which the cluster-etcd-operator's two-node jobs`, ""},
		{"the operator's CIB", missing, path("operator-cib.xml"), `runs resource "etcd" with ocf:heartbeat:podman-etcd, as the cluster-etcd-operator's`, ""},
		{"Debian's default corosync.conf", write("debian.conf", "totem {\n cluster_name: debian\n}\n"), missing, "", ""},
		{"a torn CIB", missing, write("torn.xml", `<cib><configuration><resources><primitive id="x" type=`), "", "torn.xml"},
		{"an unreadable corosync.conf", dir, missing, "", "is a directory"},
	}
	for _, r := range rows {
		got, err := operatorConfigured(r.conf, r.cib, "edge-042")
		if (r.want == "") != (got == "") || !strings.Contains(got, r.want) {
			t.Errorf("%s: got %q, want one with %q", r.name, got, r.want)
		}
		if (err == nil) != (r.err == "") || (err != nil && !strings.Contains(err.Error(), r.err)) {
			t.Errorf("%s: error %v, want one with %q", r.name, err, r.err)
		}
	}
}
