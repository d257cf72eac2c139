//go:build integration

package cluster_test

import (
	"time"

	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
)

// kubeletStoppingEtcd is when node's stand-in kubelet last began to stop the etcd container (its
// log), zero when it did not.
func (c *cluster) kubeletStoppingEtcd(node string) time.Time {
	at, err := kubeletstandin.LoggedAt(readFile(c.layout.Nodes[node].path("log", "kubelet.out")), kubeletstandin.Stopping)
	if err != nil {
		c.t.Fatalf("%s's stand-in kubelet log: %v", node, err)
	}
	return at
}
