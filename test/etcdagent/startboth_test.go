//go:build integration

package etcdagent_test

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// bothPromoted is the promote's environment when Pacemaker promotes both instances in one
// transition.
var bothPromoted = map[string]string{"OCF_RESKEY_CRM_meta_notify_promote_uname": "node1 node2"}

// promoteBothMembers asserts that both nodes may lead, promotes both at once as Pacemaker does
// (each promote waits for the two members to elect a leader), notifies both, and checks that both
// started their existing members: the members that ran before (ids), both voters, nothing
// forced, nothing moved aside. Staggered, node1's promote begins only once node2's etcd accepts
// connections on its client port, which it does without answering until it has a leader: what
// node1 sees when its own decision is slower (a large WAL to read).
func promoteBothMembers(t testing.TB, c *cluster, ids map[string]uint64, staggered bool) {
	t.Helper()
	nodes := []*node{c.nodes["node1"], c.nodes["node2"]}
	moved := map[*node][]string{}
	for _, n := range nodes {
		if _, ok := n.score(); !ok {
			t.Fatalf("%s may not lead, want both to start their members\n%s", n.name, c.dump())
		}
		moved[n] = backups(t, n)
	}
	var wg sync.WaitGroup
	for _, n := range []*node{nodes[1], nodes[0]} {
		if staggered && n == nodes[0] {
			addr := net.JoinHostPort(nodes[1].ip, "2379")
			untilFor(t, time.Minute, addr+" accepting connections", func() bool { return accepts(addr) })
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := n.run("promote", bothPromoted)
			if code != ocfSuccess || !strings.Contains(out, "decision=start-both") || strings.Contains(out, "forcing a new cluster") {
				t.Errorf("%s promote: exit %d, want 0 starting both members and forcing nothing\n%s", n.name, code, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, n := range nodes {
		n.notify("promote", "node1", "node2")
	}
	for _, n := range nodes {
		n.must("monitor", ocfPromoted)
		if now := backups(t, n); !slices.Equal(now, moved[n]) {
			t.Fatalf("%s moved data aside: %v, before %v", n.name, now, moved[n])
		}
		if got := memberIDs(t, n); !maps.Equal(got, ids) {
			t.Fatalf("%s's members are %x, want the voters that ran before, %x", n.name, got, ids)
		}
	}
}

// TestColdBootStartsBothMembers: both nodes lose their power and come back in one transition.
// Both hold voters of their two-member cluster, so both start their members as they were: raft
// elects a leader from the two, nothing is forced, no data is moved aside and nothing is streamed.
// Every acknowledged key is on both, and the cluster takes writes through either node. A second
// time with node1's promote deciding while node2's member has opened its port but has no leader,
// so no status: it starts its member too.
func TestColdBootStartsBothMembers(t *testing.T) {
	c := newCluster(t)
	first, second := c.nodes["node1"], c.nodes["node2"]
	acked, ids := backFromACrashOfBoth(t, c)
	promoteBothMembers(t, c, ids, false)
	for _, n := range []*node{first, second} {
		sameKeys(t, n, acked)
	}
	for k, v := range writeKeys(t, second, 50, 60) {
		acked[k] = v
	}
	sameKeys(t, first, acked)

	// Again, node1's promote deciding after node2's etcd opened its port.
	for _, n := range []*node{first, second} {
		n.must("monitor", ocfPromoted)
	}
	promoteBothMembers(t, c, crashOfBoth(t, c), true)
	for _, n := range []*node{first, second} {
		sameKeys(t, n, acked)
	}
}

// TestStartBothFallsBack: both nodes come back and Pacemaker promotes both, but only node1's
// member starts (node2's promote hangs). Past start_both_timeout node1 stops its member, withdraws its pair and decides
// by the rules that stream: with the same data it leads by name, forces a cluster of one, and
// node2 joins it as a learner. For the rest of that boot node1 publishes no pair: when both etcds
// crash again, one leads at once and the other joins it.
func TestStartBothFallsBack(t *testing.T) {
	c := newCluster(t)
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	node1.params["start_both_timeout"] = "3"
	acked, _ := backFromACrashOfBoth(t, c)
	for _, n := range []*node{node1, node2} {
		if _, ok := n.score(); !ok {
			t.Fatalf("%s may not lead, want both to start their members\n%s", n.name, c.dump())
		}
	}
	code, out := node1.run("promote", bothPromoted)
	if code != ocfSuccess {
		t.Fatalf("node1 promote: exit %d\n%s", code, out)
	}
	saysAll(t, "node1's promote", out, "decision=start-both", "no leader of both members", "forcing a new cluster of one")
	if _, err := os.Stat(filepath.Join(node1.params["state_dir"], "pair-abandoned")); err != nil {
		t.Fatalf("node1 did not mark the pair abandoned for this boot: %v", err)
	}
	if v, ok, err := c.store.Get(context.Background(), "node1", etcdnode.AttrPair, attrs.Reboot); err != nil || (ok && v != "") {
		t.Fatalf("node1's %s is %q (%v, %v), want it withdrawn", etcdnode.AttrPair, v, ok, err)
	}
	node1.notify("promote", "node1")
	node2.notify("promote", "node1")
	catchUpAndPromote(t, node2, node1)
	sameKeys(t, node2, acked)

	// Both etcds crash again within node1's boot, and both instances restart: node1 publishes no
	// pair, so both decide by the rules that stream at once.
	for _, n := range []*node{node1, node2} {
		n.must("monitor", ocfPromoted)
		n.powerOff()
		n.must("stop", ocfSuccess)
	}
	startBoth(t, node1, node2)
	if v, _, _ := c.store.Get(context.Background(), "node1", etcdnode.AttrPair, attrs.Reboot); v != "" {
		t.Fatalf("node1 published pair %q again in the boot it gave it up", v)
	}
	leader, other := promoteTheScored(t, c)
	catchUpAndPromote(t, other, leader)
	sameKeys(t, other, acked)
}

// withoutPair marks n's boot as one in which its peer's member once did not come beside its own
// (what the agent leaves in its state dir then): n publishes no pair at its starts, so a crash of
// both is decided by the rules that stream (one forces, the other joins it), the path these
// tests keep covered.
func withoutPair(t testing.TB, n *node) {
	t.Helper()
	dir := n.params["state_dir"]
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pair-abandoned"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStartBothNotAlone: both nodes come back, but Pacemaker promotes node1 alone (node2's score
// came in a later transition, which runs only once node1's promote has ended). node1 does not
// wait for a member that cannot come: it decides without the pairs at once, forces (same data,
// first by name), and node2 joins it.
func TestStartBothNotAlone(t *testing.T) {
	c := newCluster(t)
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	acked, _ := backFromACrashOfBoth(t, c)
	out := node1.must("promote", ocfSuccess)
	saysAll(t, "node1's promote", out, "the peer is not promoted in this transition", "decision=force-new-cluster", "forcing a new cluster of one")
	node1.notify("promote", "node1")
	node2.notify("promote", "node1")
	catchUpAndPromote(t, node2, node1)
	sameKeys(t, node2, acked)
}

// crashOfBoth crashes both nodes and starts both instances in one transition, as both nodes come
// back; it returns the members that ran before.
func crashOfBoth(t testing.TB, c *cluster) map[string]uint64 {
	t.Helper()
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	ids := memberIDs(t, node1)
	node1.fence()
	node2.fence()
	startBoth(t, node1, node2)
	return ids
}

// backFromACrashOfBoth forms the cluster, writes keys through node1 and has both nodes crash and
// come back (crashOfBoth); it returns the acknowledged keys and the members that ran before.
func backFromACrashOfBoth(t *testing.T, c *cluster) (map[string]string, map[string]uint64) {
	t.Helper()
	formCluster(t, c)
	acked := writeKeys(t, c.nodes["node1"], 0, 50)
	for _, n := range []*node{c.nodes["node1"], c.nodes["node2"]} {
		n.must("monitor", ocfPromoted)
	}
	return acked, crashOfBoth(t, c)
}

// saysAll fails the test unless out (what) says each of wants.
func saysAll(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Fatalf("%s does not say %q:\n%s", what, want, out)
		}
	}
}

// TestInterruptedForceStartsNoPair: both nodes crash, and node1's force of its data is cut short
// after it committed its WAL's tail (what CommitTail leaves) and before its etcd ran: its WAL
// still names both voters, but its commit index is its own. At the next start node1 publishes no
// pair, so both decide by the rules that stream at once (node1, with the same data and first by
// name, forces again and node2 joins it) instead of starting beside each other and waiting out
// start_both_timeout; once node1's forced member serves, the mark is gone.
func TestInterruptedForceStartsNoPair(t *testing.T) {
	c := newCluster(t)
	node1, node2 := c.nodes["node1"], c.nodes["node2"]
	formCluster(t, c)
	acked := writeKeys(t, node1, 0, 50)
	for _, n := range []*node{node1, node2} {
		n.must("monitor", ocfPromoted)
		n.fence()
	}
	dataDir := node1.params["data_dir"]
	if _, _, err := etcddata.CommitTail(dataDir); err != nil {
		t.Fatal(err)
	}
	startBoth(t, node1, node2)
	for n, want := range map[string]bool{"node1": false, "node2": true} {
		v, _, err := c.store.Get(context.Background(), n, etcdnode.AttrPair, attrs.Reboot)
		if err != nil || (v != "") != want {
			t.Fatalf("%s's %s is %q (%v), want one published: %v", n, etcdnode.AttrPair, v, err, want)
		}
	}
	leader, other := promoteTheScored(t, c)
	if leader != node1 {
		t.Fatalf("%s leads, want node1 (same data, first by name)", leader.name)
	}
	catchUpAndPromote(t, other, leader)
	sameKeys(t, other, acked)
	if info, err := etcddata.Inspect(dataDir); err != nil || info.ForceBegun {
		t.Fatalf("node1's data after its forced member served: force begun %v (%v), want the mark gone", info.ForceBegun, err)
	}
}
