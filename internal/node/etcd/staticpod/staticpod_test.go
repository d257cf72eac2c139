package staticpod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallerEtcd(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rows := []struct {
		name, path string
		want       bool
		err        string
	}{
		{"no manifest", filepath.Join(dir, "missing.yaml"), false, ""},
		{"the installer's pod (YAML)", write("with.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcdctl\n  - name: etcd\n"), true, ""},
		{"after the handover (JSON)", write("without.json", `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"},{"name":"etcd-readyz"}]}}`), false, ""},
		{"half-written", write("torn.json", `{"kind":"Pod","spec":{"containers":[{"name":`), false, "torn.json"},
		{"a folder", dir, false, "is a directory"},
	}
	for _, r := range rows {
		got, err := InstallerEtcd(r.path)
		if got != r.want || (err == nil) != (r.err == "") || (err != nil && !strings.Contains(err.Error(), r.err)) {
			t.Errorf("%s: got %v, %v; want %v, error with %q", r.name, got, err, r.want, r.err)
		}
	}
}

func TestDropEtcd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etcd-pod.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\nspec:\n  containers:\n  - name: etcdctl\n  - name: etcd\n  - name: etcd-readyz\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time there is nothing to drop
		if err := DropEtcd(path); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "etcdctl,etcd-readyz" || pod.Name != "etcd" {
		t.Errorf("after DropEtcd: pod %q with containers %s", pod.Name, got)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after DropEtcd: %v %v", st.Mode(), err)
	}
	if err := DropEtcd(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("DropEtcd of a missing manifest: no error")
	}
}
