//go:build integration

package cluster_test

import (
	"time"

	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
)

// kubeletStoppedEtcd is when node's stand-in kubelet last stopped the etcd container (its log),
// zero when it did not.
func (c *cluster) kubeletStoppedEtcd(node string) time.Time {
	at, err := kubeletstandin.StoppedAt(readFile(c.layout.Nodes[node].path("log", "kubelet.out")))
	if err != nil {
		c.t.Fatalf("%s's stand-in kubelet log: %v", node, err)
	}
	return at
}
