//go:build integration

package etcdagent_test

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// TestWaitsWhileAnotherEtcdHoldsTheData: both nodes crash, and an etcd the agent did not launch
// runs from node1's data dir on other ports, as the installer's does in the moment between
// closing its listeners and exiting. node1's start launches nothing beside it and says why;
// once it exited, the two decide as after any crash of both, and nothing acknowledged is lost.
func TestWaitsWhileAnotherEtcdHoldsTheData(t *testing.T) {
	c := newCluster(t)
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	leader, _ := formCluster(t, c)
	acked := writeKeys(t, leader, 0, 20)
	node1.fence()
	node2.fence()

	dataDir := node1.params["data_dir"]
	other := func(port string) string { return "http://" + net.JoinHostPort(node1.ip, port) }
	stop := testproc.Start(t, filepath.Join(c.dir, "other-etcd.log"), testbin.Etcd(t),
		"--name", "node1", "--data-dir", dataDir,
		"--listen-client-urls", other("12379"), "--advertise-client-urls", other("12379"),
		"--listen-peer-urls", other("12380"))
	untilFor(t, time.Minute, "the other etcd holds node1's data", func() bool {
		file, err := etcddata.Held(dataDir)
		return err == nil && file != ""
	})

	out := node1.must("start", ocfSuccess)
	saysAll(t, "node1's start", out, "an etcd this agent did not launch still holds its data")
	if addr := net.JoinHostPort(node1.ip, "2379"); accepts(addr) {
		t.Fatalf("node1's agent launched etcd (%s answers) beside the etcd that holds its data", addr)
	}

	stop()
	node1.must("monitor", ocfSuccess)
	node2.must("start", ocfSuccess)
	node1.must("monitor", ocfSuccess)
	leader, follower := promoteTheScored(t, c)
	catchUpAndPromote(t, follower, leader)
	for _, n := range []*node{leader, follower} {
		sameKeys(t, n, acked)
	}
}
