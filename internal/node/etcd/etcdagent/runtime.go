package etcdagent

import (
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun/podman"
)

// runtimeFor builds the configured etcd runtime.
func runtimeFor(c etcdnode.Config) etcdrun.Runtime {
	pidFile := filepath.Join(c.StateDir, "etcd.pid")
	if c.Runtime == "podman" {
		return podman.Runtime{Binary: c.PodmanBinary, Manifest: c.PodManifest, Container: "etcd", Main: etcdrun.Process{PIDFile: pidFile}}
	}
	return etcdrun.NewExec(c.EtcdBinary, pidFile, c.LogFile)
}
