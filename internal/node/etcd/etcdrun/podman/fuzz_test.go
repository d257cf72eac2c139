package podman

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadPod: whatever sits where the operator writes the external-etcd pod manifest, it is
// read or refused with an error, never a panic.
func FuzzLoadPod(f *testing.F) {
	for _, name := range []string{"external-etcd-pod-4.19.json", "external-etcd-pod-4.21.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"Pod","spec":{"containers":[{"name":"etcd"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "pod.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = LoadPod(path)
	})
}
