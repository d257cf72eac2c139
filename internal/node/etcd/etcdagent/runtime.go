package etcdagent

import (
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun/podman"
)

// runtimeFor builds the configured etcd runtime.
func runtimeFor(c etcdnode.Config) etcdrun.Runtime {
	if c.Runtime == "podman" {
		return podman.Runtime{Binary: c.PodmanBinary, Manifest: c.PodManifest, Container: "etcd"}
	}
	return etcdrun.NewExec(c.EtcdBinary, filepath.Join(c.StateDir, "etcd.pid"), c.LogFile)
}

// manifestTLS gives the podman runtime without TLS parameters the certificates of the pod
// manifest's etcd command (the operator's layout: one certificate per node, named after it),
// as host paths. A manifest whose etcd has none is refused like runtime exec without them.
func manifestTLS(c *etcdnode.Config) error {
	if c.Runtime != "podman" || c.TLS != nil {
		return nil
	}
	pod, err := podman.LoadPod(c.PodManifest)
	if err != nil {
		return err
	}
	if c.TLS, err = pod.TLS(); err != nil {
		return err
	}
	return c.CheckPlaintext()
}
