package staticpod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallerEtcd(t *testing.T) {
	root := t.TempDir()
	manifests := filepath.Join(root, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(manifests, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rows := []struct {
		name, path string
		revision   bool // the operator's static pod has a revision folder on the node
		want       bool
		err        string
	}{
		{"no manifest, no revision", filepath.Join(manifests, "etcd-pod.yaml"), false, false, ""},
		{"no manifest while the operator rewrites it", filepath.Join(manifests, "etcd-pod.yaml"), true, true, "being rewritten"},
		{"the installer's pod (YAML)", write("with.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcdctl\n  - name: etcd\n"), true, true, ""},
		{"after the handover (JSON)", write("without.json", `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"},{"name":"etcd-readyz"}]}}`), true, false, ""},
		{"empty, being written", write("empty.yaml", ""), true, true, "holds no pod"},
		{"half-written", write("torn.json", `{"kind":"Pod","spec":{"containers":[{"name":`), true, true, "torn.json"},
		{"a folder", manifests, true, true, "is a directory"},
	}
	for _, r := range rows {
		revision := filepath.Join(root, "static-pod-resources", "etcd-pod-3")
		if err := os.RemoveAll(filepath.Dir(revision)); err != nil {
			t.Fatal(err)
		}
		if r.revision {
			if err := os.MkdirAll(revision, 0o755); err != nil {
				t.Fatal(err)
			}
		}
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
