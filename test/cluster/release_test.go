//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
	"github.com/tnf-layer/tnf-layer/test/logline"
)

// useRelease gives node, powered off, the agents in bin: an update of its layer to that release,
// or a rollback.
func (c *cluster) useRelease(node, bin string) {
	c.t.Helper()
	n := c.layout.Nodes[node]
	if n.holder() != 0 {
		c.t.Fatalf("%s is on: its agents change only while it is off", node)
	}
	c.installAgents(n, bin)
	n.Bin = bin
	c.layout.Nodes[node] = n
	c.writeLayout()
	c.t.Logf("%s: agents of %s", node, bin)
}

// runsRelease checks that node's tnfctl reports version.
func (c *cluster) runsRelease(node, version string) {
	c.t.Helper()
	if out, err := c.tnfctl(node, "--version"); err != nil || strings.TrimSpace(out) != version {
		c.t.Fatalf("%s: tnfctl --version (%v): %q, want %s", node, err, out, version)
	}
}

// updateNode is one node's turn in a rolling update (or a rollback) to the agents in bin: a clean
// stop, the agents swapped, the node back and both promoted, with writes acknowledged meanwhile.
func (c *cluster) updateNode(w *writer, node, bin string) {
	c.t.Helper()
	c.rebootChanging(w, node, func() { c.useRelease(node, bin) })
}

// TestRollingUpdateFromPrevious: both nodes run the previous release; a rolling update brings
// node1, then node2, to this one, and node2 is rolled back, with a writer running: each node
// leaves cleanly, comes back on the other release and is promoted beside its peer of the other
// release; nobody is fenced, no write is lost and both end with the same data.
func TestRollingUpdateFromPrevious(t *testing.T) {
	prev := testbin.Previous(t)
	t.Parallel()
	c := newCluster(t, nil)
	for _, n := range c.nodes {
		c.useRelease(n, prev)
	}
	w := c.upAndWriting()
	for _, n := range c.nodes {
		c.updateNode(w, n, c.bin)
	}
	c.updateNode(w, "node2", prev)
	c.runsRelease("node1", testbin.Release(c.t, c.bin))
	c.runsRelease("node2", testbin.Release(c.t, prev))
	c.stopAndCheck(w)
	c.assertPlanned()
}

// TestMixedReleases: the previous release's agents on one node, this release's on the other,
// as an update leaves them (the pair set up on the previous release, then the other node
// updated), through what a pair lives in an update window: each failover fault of the benchmarks (the power
// cut of either node, the link cut, a hang, a slow BMC), a planned reboot of each, both crashing,
// both shut down one after the other and powered on together, then the older node's update and
// its rollback. A writer runs throughout: every acknowledged write is on both members and both end
// with the same data. Once with each node on the previous release.
func TestMixedReleases(t *testing.T) {
	onlyInClusterTest(t)
	prev := testbin.Previous(t)
	t.Parallel()
	for _, old := range []string{"node1", "node2"} {
		t.Run("previous-on-"+old, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, nil)
			for _, n := range c.nodes {
				c.useRelease(n, prev)
			}
			w := c.upAndWriting()
			c.updateNode(w, c.other(old), c.bin)
			for _, f := range failoverFaults() {
				c.throughFault(w, f)
			}
			for _, n := range c.nodes {
				c.reboot(w, n)
			}
			c.crashBoth()
			c.up()
			c.waitWrites(w, "both back after both crashed")
			c.shutdownInTurnThenOnTogether(w, old)
			c.updateNode(w, old, c.bin)
			c.updateNode(w, old, prev)
			c.runsRelease(old, testbin.Release(c.t, prev))
			c.stopAndCheck(w)
		})
	}
}

// throughFault injects f while w writes: the survivor fences the victim and takes writes alone;
// then f heals (or fencing's reboot does), both are promoted and take writes again.
func (c *cluster) throughFault(w *writer, f failoverFault) {
	c.t.Helper()
	fenced := c.fences(f.survivor, f.victim)
	f.inject(c)
	c.waitFencedAgain(f.survivor, f.victim, fenced)
	c.waitWrites(w, f.name+": "+f.survivor+" alone")
	if f.heal != nil {
		f.heal(c)
	}
	c.waitRoles(f.survivor, bothPromoted)
	c.waitWrites(w, f.name+": both back")
}

// shutdownInTurnThenOnTogether is the field's site shutdown: first leaves cleanly, the other
// serves alone, then it shuts down too as the last voter; both are powered on together and the
// cluster forms again from the last voter's data, with no admin step.
func (c *cluster) shutdownInTurnThenOnTogether(w *writer, first string) {
	c.t.Helper()
	c.power("shutdown", first)
	c.waitWrites(w, first+" shut down, "+c.other(first)+" alone")
	c.power("shutdown", c.other(first))
	c.both("on")
	c.waitRoles("node1", bothPromoted)
	c.waitWrites(w, "both back after the shutdown in turn")
}

// TestShutdownInTurnThenOnTogether: the field's sequence on this release alone, both ways round.
// Nobody is fenced; the last voter restarts its data as a cluster of one (its membership is
// itself already: the first node left it), and the first node joins it as a learner.
func TestShutdownInTurnThenOnTogether(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	for _, first := range c.nodes {
		before := c.agentLogSizes()
		c.shutdownInTurnThenOnTogether(w, first)
		round := c.agentLogsSince(before)
		if !strings.Contains(round, "the last voter never removes itself") || !strings.Contains(round, "decision=join-as-learner") {
			t.Errorf("%s first: the last voter did not stay or the first node did not join it:\n%s", first,
				logline.Grep(round, "stop decision", "decision=", "last voter"))
		}
	}
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}

// nodeEtcd is where a node of the mixed-etcd scenarios finds its etcd: inside its own /usr/sbin
// overlay, so that each node runs its own version, as each node's image ships one.
const nodeEtcd = "/usr/sbin/tnf-test-etcd"

// newPerNodeEtcdCluster is a cluster whose nodes each run the etcd at nodeEtcd (useEtcd puts
// one there), with the paths of etcd 3.5 and 3.6 to give them.
func newPerNodeEtcdCluster(t *testing.T) (c *cluster, etcd35, etcd36 string) {
	t.Helper()
	etcd35, etcd36 = testbin.Path(t, "etcd"), testbin.Path(t, filepath.Join("etcd-3.6", "etcd"))
	c = newCluster(t, func(cfg *clusterconfig.Config) { cfg.Resources.Etcd["etcd_binary"] = nodeEtcd })
	return c, etcd35, etcd36
}

// useEtcd gives node, powered off, the etcd binary at path (nodeEtcd inside the node).
func (c *cluster) useEtcd(node, path string) {
	c.t.Helper()
	n := c.layout.Nodes[node]
	if n.holder() != 0 {
		c.t.Fatalf("%s is on: its etcd changes only while it is off", node)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(filepath.Join(n.Dir, "sbin", filepath.Base(nodeEtcd)), data, 0o755)
	c.t.Logf("%s: etcd %s", node, path)
}

// etcdVersions is what node's etcd reports at /version: its own version and the cluster's.
func (c *cluster) etcdVersions(node string) (server, cluster string) {
	c.t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return c.dial(c.layout.Nodes[node].NetNS, net.JoinHostPort(c.ip[node], etcdPort))
		}}}
	v, err := etcdcheck.Versions(hc, c.etcdURL(node))
	if err != nil {
		return "", err.Error()
	}
	return v.Server, v.Cluster
}

// TestEtcd35Beside36: etcd 3.5 on node1 and 3.6 on node2, as the window of an OpenShift update
// whose release moves etcd to 3.6 has them. The 3.6 node's power cut: the 3.5 node serves alone
// and the 3.6 node rejoins it. The 3.5 node's power cut: the 3.6 node serves alone, and etcd
// raises the cluster's version to 3.6, which a 3.5 member can never join again (etcd allows no
// downgrade): back on 3.5, node1 refuses to join, says why and moves nothing aside while node2
// serves on, until its update to 3.6 brings it back. A writer runs throughout: every acknowledged write is on both members at the end.
func TestEtcd35Beside36(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c, etcd35, etcd36 := newPerNodeEtcdCluster(t)
	c.useEtcd("node1", etcd35)
	c.useEtcd("node2", etcd36)
	w := c.upAndWriting()
	c.clusterVersion("node2", "3.5")

	cut := func(victim string) {
		survivor := c.other(victim)
		fenced := c.fences(survivor, victim)
		c.power("off", victim)
		c.waitFencedAgain(survivor, victim, fenced)
		c.waitWrites(w, survivor+" alone")
	}
	cut("node2")
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)
	c.waitWrites(w, "node2 (3.6) back beside node1 (3.5)")
	c.clusterVersion("node2", "3.5")

	cut("node1")
	c.clusterVersion("node2", "3.6")
	moved := movedAside(c, "node1")
	c.powerBackOn("node1")
	c.waitFor("node1's etcd 3.5 refuses to join a cluster of version 3.6, saying why", settle, func() (bool, string) {
		_, st, err := c.status("node2")
		if err != nil {
			return false, err.Error()
		}
		for _, n := range st.Nodes {
			if why := n.Attributes[etcdnode.AttrDecision]; n.Name == "node1" {
				return strings.HasPrefix(why, "refuse: ") && strings.Contains(why, "etcd version 3.6"), why
			}
		}
		return false, "node1 not in Pacemaker's status"
	})
	if _, st, err := c.status("node2"); err != nil || st.Role("etcd", "node1") == "Promoted" {
		t.Fatalf("node1's etcd 3.5 was promoted in a cluster of version 3.6 (%v)", err)
	}
	if now := movedAside(c, "node1"); now != moved {
		t.Errorf("node1 moved data aside while it refused: %d copies, %d before", now, moved)
	}
	c.waitWrites(w, "node2 serving, node1 on 3.5 refused")
	out, _, _ := c.statusRun("node1")
	t.Logf("node1 on 3.5 beside a 3.6 cluster, tnfctl status:\n%s", out)

	c.rebootChanging(w, "node1", func() { c.useEtcd("node1", etcd36) })
	c.stopAndCheck(w)
}

// TestEtcd35Beside36Faults: etcd 3.5 beside 3.6 through each failover fault of the benchmarks
// whose victim is the 3.6 node (a power cut, the link cut, a hang, a power cut behind a slow BMC):
// the 3.5 node serves alone and the 3.6 node rejoins it as a learner, so the cluster stays at 3.5.
// Then both nodes crash with the same data: both start their members again (the 3.5 member keeps
// the cluster at 3.5), nothing is forced. Once with 3.6 on each node. A writer runs throughout, paused for the crash so
// that the data is the same: every acknowledged write is on both members. (A fault whose survivor
// is the 3.6 node raises the cluster to 3.6 for good: TestEtcd35Beside36.)
func TestEtcd35Beside36Faults(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	for _, newer := range []string{"node1", "node2"} {
		t.Run("3.6-on-"+newer, func(t *testing.T) {
			t.Parallel()
			c, etcd35, etcd36 := newPerNodeEtcdCluster(t)
			older := c.other(newer)
			c.useEtcd(newer, etcd36)
			c.useEtcd(older, etcd35)
			w := c.upAndWriting()
			c.clusterVersion(older, "3.5")
			for _, f := range failoverFaults() {
				if f.victim != newer {
					continue
				}
				c.throughFault(w, f)
				c.clusterVersion(f.survivor, "3.5")
			}
			c.stopAndCheck(w)
			before := c.agentLogSizes()
			c.crashBoth()
			c.up()
			c.clusterVersion(newer, "3.5")
			c.bothStarted(c.agentLogsSince(before))
			c.stopAndCheck(c.writing())
		})
	}
}

// clusterVersion waits until node's etcd reports the cluster's version as want (3.5 or 3.6).
func (c *cluster) clusterVersion(node, want string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("the cluster's etcd version %s, seen from %s", want, node), settle, func() (bool, string) {
		server, cluster := c.etcdVersions(node)
		return strings.HasPrefix(cluster, want), server + " " + cluster
	})
}

// TestEtcdRollingUpdate35To36: both nodes on etcd 3.5, then MCO's rolling update to a release
// whose etcd is 3.6 (4.20 to 4.21): node2 first, back and promoted beside node1's 3.5 (the
// cluster stays at 3.5), then node1, after which etcd raises the cluster to 3.6; then a planned
// reboot of each on 3.6. A writer runs throughout: nobody is fenced, nothing is forced, no
// acknowledged write is lost and both end with the same data. It starts from the project's
// etcd 3.5.21: etcd's upgrade guide asks for 3.5.26 first (OpenShift 4.20's), which the module
// proxy here does not serve (3.5.24 is the newest it has).
func TestEtcdRollingUpdate35To36(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c, etcd35, etcd36 := newPerNodeEtcdCluster(t)
	for _, n := range c.nodes {
		c.useEtcd(n, etcd35)
	}
	w := c.upAndWriting()
	c.clusterVersion("node1", "3.5")
	c.rebootChanging(w, "node2", func() { c.useEtcd("node2", etcd36) })
	c.clusterVersion("node2", "3.5")
	c.rebootChanging(w, "node1", func() { c.useEtcd("node1", etcd36) })
	c.clusterVersion("node1", "3.6")
	for _, n := range c.nodes {
		c.reboot(w, n)
	}
	c.stopAndCheck(w)
	c.assertPlanned()
}

// movedAside counts the copies of etcd data node has moved aside.
func movedAside(c *cluster, node string) int {
	c.t.Helper()
	copies, err := filepath.Glob(c.layout.Nodes[node].path("disk", "var-lib", "etcd*.moved-*"))
	if err != nil {
		c.t.Fatal(err)
	}
	return len(copies)
}
