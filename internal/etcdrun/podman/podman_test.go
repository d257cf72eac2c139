package podman

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/etcdrun"
)

// TestPodmanRunArgs builds the podman command line from a manifest in the external-etcd static
// pod format: image and environment from the manifest (without the settings the agent owns),
// host mounts, and the agent's etcd flags.
func TestPodmanRunArgs(t *testing.T) {
	p := Runtime{Binary: "podman", Manifest: "testdata/external-etcd-pod.yaml", Container: "etcd"}
	s := etcdrun.Spec{Name: "master-0", DataDir: "/var/lib/etcd", ClientURLs: []string{"https://192.0.2.10:2379"}, PeerURL: "https://192.0.2.10:2380"}
	got, err := p.RunArgs(s)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{
		"run", "--detach", "--replace", "--name=etcd", "--network=host", "--privileged", "--security-opt=label=disable",
		"--volume=/var/lib/etcd:/var/lib/etcd",
		"--volume=/etc/kubernetes/manifests:/etc/kubernetes/manifests",
		"--volume=/etc/kubernetes/static-pod-resources/etcd-certs:/etc/kubernetes/static-pod-certs:ro",
		"--env=ETCD_QUOTA_BACKEND_BYTES=8589934592",
		"--env=ETCD_HEARTBEAT_INTERVAL=100",
		"--env=ETCD_ELECTION_TIMEOUT=1000",
		"--env=ETCD_CIPHER_SUITES=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0b5bc3a1f3c2ee3ffd48a51ad38c10e9c3e8a4a2a7c28c8e3f3d1c0f2c1d2e3f",
		"etcd",
	}, s.Args()...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("podman args:\n got %q\nwant %q", got, want)
	}
}

func TestPodmanBadManifest(t *testing.T) {
	dir := t.TempDir()
	rows := map[string]string{
		"no etcd container": "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: other\n    image: x\n",
		"empty image":       "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcd\n",
		"not yaml":          "{",
	}
	for name, body := range rows {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Runtime{Manifest: path}.RunArgs(etcdrun.Spec{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	if _, err := (Runtime{Manifest: filepath.Join(dir, "missing.yaml")}).RunArgs(etcdrun.Spec{}); err == nil {
		t.Error("missing manifest accepted")
	}
}
