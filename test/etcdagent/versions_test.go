//go:build integration

package etcdagent_test

import (
	"context"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
)

// TestOlderEtcdLeadsTies: etcd 3.6 on node1 and 3.5 on node2, as in the window of an OpenShift
// update whose release moves etcd to 3.6 (node1 updated first). In both ties node1 would win by
// name: the first boot (neither node has data) and both nodes back from a site's power loss with
// the same data, in a boot in which node1 gave its pair up. In each the 3.5 node leads and the 3.6
// node joins it as a learner, so the cluster stays at version 3.5 and both serve; led by node1 it
// would go to 3.6, which node2's etcd 3.5 can never join. A third time, with both pairs published,
// both start their members and the cluster stays at 3.5 as well. Every acknowledged key is on
// both members at the end. The run with TNF_ETCD set skips it: it names both etcd builds itself.
func TestOlderEtcdLeadsTies(t *testing.T) {
	if os.Getenv("TNF_ETCD") != "" {
		t.Skip("names both etcd builds itself: the default run has it")
	}
	c := newCluster(t)
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	node1.params["etcd_binary"] = testbin.Path(t, filepath.Join("etcd-3.6", "etcd"))
	node2.params["etcd_binary"] = testbin.Path(t, "etcd")

	startBoth(t, node1, node2)
	leadsAtVersion35(t, c, "first boot", 0)
	acked := writeKeys(t, node2, 0, 20)
	for _, n := range []*node{node1, node2} {
		n.must("monitor", ocfPromoted)
	}
	node1.fence()
	node2.fence()
	withoutPair(t, node1)
	logged := logSize(node1)
	startBoth(t, node1, node2)
	leadsAtVersion35(t, c, "both back with the same data", logged)
	for _, n := range []*node{node1, node2} {
		sameKeys(t, n, acked)
	}

	promoteBothMembers(t, c, crashOfBoth(t, c), false)
	for _, n := range []*node{node1, node2} {
		sameKeys(t, n, acked)
		if server, cluster := etcdVersions(t, n); !strings.HasPrefix(cluster, "3.5.") {
			t.Fatalf("both members started: %s (etcd %s) reports cluster version %s, want 3.5", n.name, server, cluster)
		}
	}
}

// leadsAtVersion35 checks that node2 (etcd 3.5) is the only node that may lead, promotes it, and
// catches node1 (3.6) up as its learner; the cluster's version stays 3.5. node1's agent log from
// offset logged must give the etcd versions as the reason it waited.
func leadsAtVersion35(t *testing.T, c *cluster, when string, logged int) {
	t.Helper()
	leader, other := promoteTheScored(t, c)
	if leader.name != "node2" {
		t.Fatalf("%s: %s (etcd %s) leads, want node2 (etcd 3.5)\n%s", when, leader.name, leader.params["etcd_binary"], c.dump())
	}
	if log := logSince(other, logged); !regexp.MustCompile(`decision=wait reason=".*etcd 3\.6\.\d+ beside 3\.5\.\d+: the older etcd leads`).MatchString(log) {
		t.Errorf("%s: node1's log does not say it waits because node2's etcd is older:\n%s", when, log)
	}
	catchUpAndPromote(t, other, leader)
	for _, n := range []*node{leader, other} {
		if server, cluster := etcdVersions(t, n); !strings.HasPrefix(cluster, "3.5.") {
			t.Fatalf("%s: %s (etcd %s) reports cluster version %s, want 3.5", when, n.name, server, cluster)
		}
	}
}

func logSize(n *node) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.agentLog.Len()
}

func logSince(n *node, offset int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.agentLog.String()[offset:]
}

// etcdVersions is what n's etcd reports at /version: its own version and the cluster's.
func etcdVersions(t *testing.T, n *node) (server, cluster string) {
	t.Helper()
	v, err := etcdcheck.Versions(&http.Client{Timeout: 5 * time.Second}, n.url())
	if err != nil {
		t.Fatal(err)
	}
	return v.Server, v.Cluster
}

// TestPreviousReleaseBeside: the previous release's agent on one node, this release's on the
// other, as in MCO's update of one node after the other: the cluster forms, each node's power cut
// is answered by its peer forcing a cluster of one on the notification and the fenced node
// rejoining, and both crash and come back together. Every acknowledged key is on both members at
// the end. Once with each node on the previous release. (test/cluster runs the two releases
// through Pacemaker: make cluster-ci and make cluster-test.)
func TestPreviousReleaseBeside(t *testing.T) {
	prev := testbin.Previous(t)
	if os.Getenv("TNF_ETCD") != "" {
		t.Skip("the agents' exchange does not depend on etcd's version: the default run has it")
	}
	for _, old := range []string{"node1", "node2"} {
		t.Run("previous-on-"+old, func(t *testing.T) {
			c := newCluster(t)
			c.nodes[old].agent = filepath.Join(prev, "ocf-etcd")
			leader, other := formCluster(t, c)
			for name, bin := range map[string]string{old: prev, map[string]string{"node1": "node2", "node2": "node1"}[old]: testbin.Dir(t)} {
				if got, reported := publishedLayer(t, c, name), testbin.Release(t, bin); got == "" || !strings.HasSuffix(reported, " "+got) {
					t.Fatalf("%s publishes layer version %q, want the one of %s (%q)", name, got, bin, reported)
				}
			}
			acked := writeKeys(t, leader, 0, 10)
			for round := range 2 {
				leader.fence()
				other.notify("stop", leader.name)
				maps.Copy(acked, writeKeys(t, other, 10*(round+1), 10*(round+2)))
				other.must("monitor", ocfPromoted)
				leader.must("start", ocfSuccess)
				catchUpAndPromote(t, leader, other)
				leader, other = other, leader
			}
			for _, n := range []*node{leader, other} {
				n.must("monitor", ocfPromoted)
				n.fence()
			}
			startBoth(t, leader, other)
			leader, other = promoteTheScored(t, c)
			catchUpAndPromote(t, other, leader)
			for _, n := range []*node{leader, other} {
				sameKeys(t, n, acked)
			}
		})
	}
}

// publishedLayer is the layer version node's agent published.
func publishedLayer(t *testing.T, c *cluster, node string) string {
	t.Helper()
	v, _, err := c.store.Get(context.Background(), node, etcdnode.AttrLayerVersion, attrs.Reboot)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
