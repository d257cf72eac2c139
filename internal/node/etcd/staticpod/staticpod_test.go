package staticpod

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

// TestGuard: of the kubelet's static pods, the ones with an etcd container (a stock restore
// script's) are moved out and kept, whatever their name; the operator's pod without one, other
// pods, hidden files and what is no pod stay. The record keeps each refusal until it is
// forgotten.
func TestGuard(t *testing.T) {
	root := t.TempDir()
	manifests, keep := filepath.Join(root, "manifests"), filepath.Join(root, "refused")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"etcd-pod.yaml":           "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcd\n    command: [etcd, --force-new-cluster]\n  - name: etcd-readyz\n",
		"restore.json":            `{"kind":"Pod","spec":{"containers":[{"name":"etcd","command":["/bin/sh","-c"],"args":["etcdctl snapshot restore"]}]}}`,
		"kube-apiserver-pod.yaml": `{"kind":"Pod","spec":{"containers":[{"name":"kube-apiserver"}]}}`,
		"operator-etcd.yaml":      `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"},{"name":"etcd-readyz"}]}}`,
		".etcd-pod.yaml-123":      `{"kind":"Pod","spec":{"containers":[{"name":"etcd"}]}}`,
		"torn.json":               `{"kind":"Pod","spec":{"containers":[{"name":"etcd"`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(manifests, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	refused, err := Guard(manifests, keep, now)
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for _, r := range refused {
		moved[filepath.Base(r.Manifest)] = r.Command
		if data, err := os.ReadFile(r.MovedTo); err != nil || string(data) != files[filepath.Base(r.Manifest)] {
			t.Errorf("%s kept as %s: %q, %v", r.Manifest, r.MovedTo, data, err)
		}
	}
	want := map[string]string{"etcd-pod.yaml": "etcd --force-new-cluster", "restore.json": "/bin/sh -c etcdctl snapshot restore"}
	if !reflect.DeepEqual(moved, want) {
		t.Errorf("refused %v, want %v", moved, want)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(manifests, name))
		if gone := os.IsNotExist(err); gone != (want[name] != "") {
			t.Errorf("%s: gone %v", name, gone)
		}
	}
	if again, err := Guard(manifests, keep, now); err != nil || len(again) != 0 {
		t.Errorf("a second look refused %v, %v", again, err)
	}
	record := filepath.Join(root, "refused.json")
	for range 2 {
		if err := RecordRefused(record, refused[:1]); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ReadRefused(record); err != nil || len(got) != 2 || got[1].Manifest != refused[0].Manifest {
		t.Errorf("record %+v, %v", got, err)
	}
	if got, err := ReadRefused(filepath.Join(root, "none.json")); err != nil || got != nil {
		t.Errorf("no record: %+v, %v", got, err)
	}
}
