package podman

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
)

// TestConfigTLS: runtime podman without TLS parameters takes the host paths of the manifest's
// etcd TLS flags; TLS parameters, or runtime exec, leave the configuration as it is; a
// certificate missing on the node is an error naming it.
func TestConfigTLS(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "etcd-certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"serving.crt", "serving.key", "peer.crt", "peer.key", "ca.crt"} {
		if err := os.WriteFile(filepath.Join(certs, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := "/etc/kubernetes/static-pod-certs/"
	manifest := filepath.Join(dir, "pod.yaml")
	pod := `kind: Pod
spec:
  volumes: [{name: cert-dir, hostPath: {path: ` + certs + `}}]
  containers:
  - name: etcd
    image: etcd:test
    volumeMounts: [{name: cert-dir, mountPath: /etc/kubernetes/static-pod-certs}]
    command: [/bin/sh, -c, "exec etcd --cert-file=` + in + `serving.crt --key-file=` + in + `serving.key --trusted-ca-file=` + in + `ca.crt --peer-cert-file=` + in + `peer.crt --peer-key-file=` + in + `peer.key --peer-trusted-ca-file=` + in + `ca.crt"]
`
	if err := os.WriteFile(manifest, []byte(pod), 0o600); err != nil {
		t.Fatal(err)
	}
	c := etcdnode.Config{Runtime: "podman", PodManifest: manifest}
	if err := ConfigTLS(&c); err != nil {
		t.Fatal(err)
	}
	want := etcdrun.TLS{CertFile: certs + "/serving.crt", KeyFile: certs + "/serving.key", TrustedCAFile: certs + "/ca.crt",
		PeerCertFile: certs + "/peer.crt", PeerKeyFile: certs + "/peer.key", PeerTrustedCAFile: certs + "/ca.crt"}
	if c.TLS == nil || *c.TLS != want {
		t.Errorf("TLS from the manifest: %+v, want %+v", c.TLS, want)
	}
	own := &etcdrun.TLS{CertFile: "/own.crt"}
	for _, c := range []etcdnode.Config{{Runtime: "podman", PodManifest: manifest, TLS: own}, {Runtime: "exec", PodManifest: manifest}} {
		before := c.TLS
		if err := ConfigTLS(&c); err != nil || c.TLS != before {
			t.Errorf("runtime %s with TLS %v: changed to %v (%v)", c.Runtime, before, c.TLS, err)
		}
	}
	if err := os.Remove(filepath.Join(certs, "peer.key")); err != nil {
		t.Fatal(err)
	}
	c = etcdnode.Config{Runtime: "podman", PodManifest: manifest}
	if err := ConfigTLS(&c); err == nil || !strings.Contains(err.Error(), "--peer-key-file") || !strings.Contains(err.Error(), manifest) {
		t.Errorf("missing peer key: %v", err)
	}
}
