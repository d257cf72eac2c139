package staticpod

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// FuzzInstallerEtcd: whatever the kubelet's manifest holds (the operator's installer rewrites
// it in place, so a reader may find any prefix of it), "no installer etcd" comes only from a
// manifest that reads as a pod with containers, none named etcd; and once DropEtcd has
// rewritten a manifest, it runs no installer etcd.
func FuzzInstallerEtcd(f *testing.F) {
	f.Add([]byte(`{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"},{"name":"etcd"}]}}`))
	f.Add([]byte(`{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"}]}}`))
	f.Add([]byte(`{"kind":"Pod","spec":{"contain`))
	f.Add([]byte("kind: Pod\nspec:\n  containers:\n  - name: etcd\n"))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		path := filepath.Join(t.TempDir(), "etcd-pod.yaml")
		if err := os.WriteFile(path, manifest, 0o600); err != nil {
			t.Fatal(err)
		}
		installer, err := InstallerEtcd(path)
		if err != nil && !installer {
			t.Fatalf("an error without counting as the installer's etcd: %v", err)
		}
		if !installer {
			var pod corev1.Pod
			if yaml.Unmarshal(manifest, &pod) != nil || len(pod.Spec.Containers) == 0 || EtcdIndex(pod) >= 0 {
				t.Fatalf("no installer etcd read from %q", manifest)
			}
		}
		if err != nil {
			return
		}
		if err := DropEtcd(path); err != nil {
			t.Fatalf("DropEtcd on a manifest that reads: %v", err)
		}
		if installer, err := InstallerEtcd(path); installer && err == nil {
			t.Fatalf("etcd still in the manifest after DropEtcd: %q", manifest)
		}
	})
}
