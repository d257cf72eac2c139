//go:build integration

package etcdagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencealert"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

const (
	ocfSuccess    = 0
	ocfGeneric    = 1
	ocfConfigured = 6
	ocfNotRunning = 7
	ocfPromoted   = 8
)

// startAndLead does Pacemaker's part of a cold boot: start both instances, promote the one
// that has a promotion score (asserting there is exactly one), notify both, and return the
// leader and the other node.
func startAndLead(t testing.TB, c *cluster, first, second *node) (leader, other *node) {
	t.Helper()
	first.must("start", ocfSuccess)
	second.must("start", ocfSuccess)
	// The first one started before its peer had published: it looks again at its monitor.
	first.must("monitor", ocfSuccess)
	second.must("monitor", ocfSuccess)
	return promoteTheScored(t, c)
}

// promoteTheScored asserts that exactly one node has a promotion score, promotes it as
// Pacemaker would and notifies both; it returns that node and the other.
func promoteTheScored(t testing.TB, c *cluster) (leader, other *node) {
	t.Helper()
	var scored []*node
	for _, n := range []*node{c.nodes["node1"], c.nodes["node2"]} {
		if _, ok := n.score(); ok {
			scored = append(scored, n)
		}
	}
	if len(scored) != 1 {
		t.Fatalf("%d nodes may lead, want exactly 1\n%s", len(scored), c.dump())
	}
	leader = scored[0]
	other = c.nodes["node1"]
	if leader == other {
		other = c.nodes["node2"]
	}
	leader.must("promote", ocfSuccess)
	leader.notify("promote", leader.name)
	other.notify("promote", leader.name)
	return leader, other
}

// catchUpAndPromote monitors a learner until it has a promotion score, then promotes it.
func catchUpAndPromote(t testing.TB, learner, voter *node) {
	t.Helper()
	untilFor(t, learner.c.catchUp, learner.name+" caught up", func() bool {
		learner.must("monitor", ocfSuccess)
		s, ok := learner.score()
		return ok && s > 0
	})
	learner.must("promote", ocfSuccess)
	learner.notify("promote", learner.name)
	voter.notify("promote", learner.name)
	learner.must("monitor", ocfPromoted)
	voter.must("monitor", ocfPromoted)
	for name, isLearner := range voter.members() {
		if isLearner {
			t.Fatalf("%s is still a learner", name)
		}
	}
	if got := len(voter.members()); got != 2 {
		t.Fatalf("%d members, want 2", got)
	}
}

func formCluster(t testing.TB, c *cluster) (leader, other *node) {
	t.Helper()
	leader, other = startAndLead(t, c, c.nodes["node1"], c.nodes["node2"])
	if members := leader.members(); !members[other.name] {
		t.Fatalf("%s did not join as a learner: %v", other.name, members)
	}
	catchUpAndPromote(t, other, leader)
	return leader, other
}

func writeKeys(t *testing.T, n *node, from, to int) map[string]string {
	t.Helper()
	want := map[string]string{}
	for i := from; i < to; i++ {
		k, v := fmt.Sprintf("/k/%04d", i), fmt.Sprintf("v%d", i)
		n.put(k, v)
		want[k] = v
	}
	return want
}

// sameKeys checks that n holds every acknowledged key. n's read is serializable (a learner
// answers no other), so a follower may trail the leader's acknowledgement by an apply: it gets
// a few seconds to catch up before a missing key counts as lost.
func sameKeys(t *testing.T, n *node, want map[string]string) {
	t.Helper()
	var k, v, got string
	holdsAll := func() bool {
		keys := n.keys("/k/")
		for k, v = range want {
			if got = keys[k]; got != v {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !holdsAll(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: key %s = %q, want %q (acknowledged write lost)", n.name, k, got, v)
		}
	}
}

func backups(t testing.TB, n *node) []string {
	t.Helper()
	m, err := filepath.Glob(n.params["data_dir"] + ".moved-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFailoverAndRejoin: two members come up through start/promote; the leader's node is
// fenced → the survivor forces a cluster of one on the notification and accepts writes at
// once; the fenced node comes back → it joins as a learner (its stale data moved aside),
// catches up and is promoted; no acknowledged write is lost and revisions never go back. Its
// story lines are what make demo prints.
func TestFailoverAndRejoin(t *testing.T) {
	s := newStory(t)
	c := newCluster(t)
	leader, other := formCluster(t, c)
	s.step("%s and %s formed a cluster through the agent's start and promote: %s leads, both are voters", leader.name, other.name, leader.name)
	acked := writeKeys(t, leader, 0, 50)
	lastRev := leader.put("/k/last-before-fence", "x")
	acked["/k/last-before-fence"] = "x"
	s.step("51 keys written through %s", leader.name)

	leader.fence()
	fenced := time.Now()
	s.step("%s, the leader's node, fenced: its etcd is gone, %s has no quorum", leader.name, other.name)
	other.notify("stop", leader.name)
	// No monitor in between: the notification alone made it serve.
	rev := other.put("/k/after-fence", "y")
	acked["/k/after-fence"] = "y"
	s.step("%s forced a cluster of one on Pacemaker's notification and took a write %.2f s after the fencing", other.name, time.Since(fenced).Seconds())
	if rev <= lastRev {
		t.Fatalf("revision went backwards after the forced cluster: %d after %d", rev, lastRev)
	}
	// The forced cluster is counted for the metrics.
	if v, _, err := c.store.Get(context.Background(), other.name, etcdnode.AttrForced, attrs.Reboot); err != nil {
		t.Fatal(err)
	} else if f, err := etcdnode.ParseTally(etcdnode.AttrForced, v); err != nil || f.Count != 1 {
		t.Errorf("%s after the forced cluster: %q (%v), want a count of 1", etcdnode.AttrForced, v, err)
	}
	other.must("monitor", ocfPromoted)
	for k, v := range writeKeys(t, other, 50, 80) {
		acked[k] = v
	}
	s.step("30 more keys written through %s alone", other.name)

	// The fenced node boots again.
	leader.must("monitor", ocfNotRunning)
	leader.must("start", ocfSuccess)
	if got := backups(t, leader); len(got) != 1 {
		t.Fatalf("stale data was not moved aside: %v", got)
	}
	s.step("%s booted again: its start moved its stale data aside and joined %s as a learner", leader.name, other.name)
	catchUpAndPromote(t, leader, other)
	s.step("%s caught up and was promoted: two voters again", leader.name)
	sameKeys(t, leader, acked)
	sameKeys(t, other, acked)
	s.step("all %d acknowledged keys are on both members; revisions never went back", len(acked))
}

// story is a test's steps told for a person (make demo prints them): one line each, with the
// seconds since the test began.
type story struct {
	t     *testing.T
	began time.Time
}

func newStory(t *testing.T) story { return story{t: t, began: time.Now()} }

func (s story) step(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("story: %6.1f s  %s", time.Since(s.began).Seconds(), fmt.Sprintf(format, args...))
}

// TestFencingAlertWhileRestarting: Pacemaker's fencing alert comes while the post-stop
// notification restarts the survivor's etcd, when no watcher listens (stopped with the old etcd,
// not yet started with the new one): the alert is sent again and the watcher of the etcd the
// notification launched takes it.
func TestFencingAlertWhileRestarting(t *testing.T) {
	c := newCluster(t)
	leader, other := formCluster(t, c)
	leader.fence()
	signalAndWait(other.pidOf("watcher.pid"), syscall.SIGKILL)
	sent := make(chan error, 1)
	go func() { sent <- fencealert.Send(context.Background(), other.params["fencing_socket"], leader.name) }()
	other.notify("stop", leader.name)
	if err := <-sent; err != nil {
		t.Fatalf("the alert was not delivered: %v", err)
	}
	if log, _ := os.ReadFile(other.params["log_file"]); !strings.Contains(string(log), "fencing alert: the peer was fenced; peer-fenced started") {
		t.Fatalf("%s's watcher did not take the alert:\n%s", other.name, tail(string(log), 3000))
	}
	other.put("/k/after-fence", "y")
}

// TestPeerEtcdStopped: Pacemaker stops the peer's instance (an etcd failure on that node, or
// maintenance): the survivor forces at once; the peer's start joins it again. Repeated to
// check that backups are capped.
func TestPeerEtcdStopped(t *testing.T) {
	c := newCluster(t)
	a, b := formCluster(t, c)
	acked := writeKeys(t, a, 0, 10)
	for round := 0; round < 4; round++ {
		b.must("stop", ocfSuccess)
		a.notify("stop", b.name)
		for k, v := range writeKeys(t, a, 100*(round+1), 100*(round+1)+5) {
			acked[k] = v
		}
		b.must("start", ocfSuccess)
		catchUpAndPromote(t, b, a)
		sameKeys(t, b, acked)
	}
	if got := len(backups(t, b)); got != 3 {
		t.Fatalf("%d moved-aside data dirs kept, want 3", got)
	}
}

// TestOlderNodeNeverLeads: the node that was down while its peer served alone boots first,
// alone, after its peer went down too: its data is older than the peer's published record, so
// it refuses to lead and says why. When the peer comes back, the peer leads and it joins.
func TestOlderNodeNeverLeads(t *testing.T) {
	c := newCluster(t)
	a, b := formCluster(t, c)
	acked := writeKeys(t, a, 0, 10)
	// A stop that keeps the member list (a node that left gracefully refuses for that reason,
	// see TestGracefulLeave): the peer forces a cluster of one and goes ahead.
	b.params["graceful_leave"] = "false"
	b.must("stop", ocfSuccess)
	a.notify("stop", b.name)
	for k, v := range writeKeys(t, a, 10, 30) {
		acked[k] = v
	}
	a.must("monitor", ocfPromoted) // publishes the newer index
	a.fence()
	olderRefusesThenJoins(t, c, b, a, acked)
}

// olderRefusesThenJoins: older starts alone while newer is down and neither gets a promotion
// score nor promotes (its refusal names the older data); newer comes back, leads, and older
// joins it with every acknowledged key.
func olderRefusesThenJoins(t *testing.T, c *cluster, older, newer *node, acked map[string]string) {
	t.Helper()
	older.must("start", ocfSuccess)
	if s, ok := older.score(); ok {
		t.Fatalf("the older node %s got promotion score %d\n%s", older.name, s, c.dump())
	}
	if code, out := older.run("promote", nil); code == ocfSuccess || !strings.Contains(out, "older than peer") {
		t.Fatalf("older node promote: exit %d, want a refusal naming the older data:\n%s", code, out)
	}
	newer.must("start", ocfSuccess)
	older.must("monitor", ocfSuccess)
	if _, ok := newer.score(); !ok {
		t.Fatalf("the newer node has no promotion score\n%s", c.dump())
	}
	newer.must("promote", ocfSuccess)
	older.notify("promote", newer.name)
	catchUpAndPromote(t, older, newer)
	sameKeys(t, older, acked)
}

// TestLaterTermBeatsALongerLog: a published record is only as new as the peer's last monitor.
// Here b stops, a is forced alone (a new raft term) and takes writes, then dies before its next
// monitor: its record's index is behind b's log, as when b's log ended in an uncommitted tail
// longer than a's when a published. b's log ended in the earlier term, so it is older anyway: b
// must refuse, or a's acknowledged writes are lost.
func TestLaterTermBeatsALongerLog(t *testing.T) {
	c := newCluster(t)
	a, b := formCluster(t, c)
	b.params["graceful_leave"] = "false"
	b.must("stop", ocfSuccess)
	a.notify("stop", b.name)
	acked := writeKeys(t, a, 0, 20)
	bData, err := etcddata.Inspect(b.params["data_dir"])
	if err != nil {
		t.Fatal(err)
	}
	// a's record as if published before it wrote: behind b's log by one entry. Its term stays.
	stale := etcdnode.Record(decision.Data{Present: true, ClusterID: bData.ClusterID, Index: bData.Index - 1})
	if err := c.store.Set(context.Background(), a.name, etcdnode.AttrData, stale, attrs.Forever); err != nil {
		t.Fatal(err)
	}
	a.fence()
	olderRefusesThenJoins(t, c, b, a, acked)
}

// TestColdBootMostRecentLeads: both nodes go down, the one with more data is started second;
// it still leads, and the other joins it.
func TestColdBootMostRecentLeads(t *testing.T) {
	c := newCluster(t)
	a, b := formCluster(t, c)
	writeKeys(t, a, 0, 5)
	// a goes down first; b serves alone and gets more data; then b goes down.
	a.must("stop", ocfSuccess)
	b.notify("stop", a.name)
	acked := writeKeys(t, b, 0, 40)
	b.must("stop", ocfSuccess)

	leader, other := startAndLead(t, c, a, b)
	if leader != b {
		t.Fatalf("%s leads, want %s (the most recent data)", leader.name, b.name)
	}
	catchUpAndPromote(t, other, leader)
	sameKeys(t, other, acked)
}

// TestOtherClusterDataNeverReused: a node whose data dir belongs to another cluster never
// leads with it and never serves it: with its peer down, both refuse (nothing tells which
// cluster is the right one); once an administrator moves the foreign data aside, the peer
// leads and the node joins it; a node that finds foreign data while its peer serves moves it
// aside and joins.
func TestOtherClusterDataNeverReused(t *testing.T) {
	foreignData := func() string {
		f := newCluster(t)
		fa := f.nodes["node1"]
		fa.must("start", ocfSuccess)
		fa.must("promote", ocfSuccess)
		writeKeys(t, fa, 0, 3)
		fa.must("stop", ocfSuccess)
		return fa.params["data_dir"]
	}
	plant := func(n *node) {
		if err := os.MkdirAll(n.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(foreignData(), n.params["data_dir"]); err != nil {
			t.Fatal(err)
		}
	}

	c := newCluster(t)
	a, b := c.nodes["node1"], c.nodes["node2"]
	b.must("start", ocfSuccess)
	b.must("promote", ocfSuccess)
	acked := writeKeys(t, b, 100, 110)
	b.must("stop", ocfSuccess)

	plant(a)
	a.must("start", ocfSuccess)
	code, out := a.run("promote", nil)
	if code == ocfSuccess || !strings.Contains(out, "another cluster") {
		t.Fatalf("promote with foreign data: exit %d\n%s", code, out)
	}
	b.must("start", ocfSuccess)
	if code, out := b.run("promote", nil); code == ocfSuccess || !strings.Contains(out, "another cluster") {
		t.Fatalf("promote facing a peer with foreign data: exit %d\n%s", code, out)
	}

	// The administrator moves the foreign data aside; a publishes that it has none.
	a.must("stop", ocfSuccess)
	if err := os.Rename(a.params["data_dir"], a.params["data_dir"]+".foreign"); err != nil {
		t.Fatal(err)
	}
	a.must("start", ocfSuccess)
	b.must("monitor", ocfSuccess)
	b.must("promote", ocfSuccess)
	a.notify("promote", b.name)
	catchUpAndPromote(t, a, b)
	sameKeys(t, a, acked)

	// Foreign data found while the peer serves: refused, never moved aside for the peer's
	// cluster; once the administrator moves it away, joined.
	a.must("stop", ocfSuccess)
	b.notify("stop", a.name)
	if err := os.RemoveAll(a.params["data_dir"]); err != nil {
		t.Fatal(err)
	}
	plant(a)
	a.must("start", ocfSuccess)
	a.must("monitor", ocfSuccess)
	if _, ok := a.score(); ok || a.pid() != 0 {
		t.Fatalf("%s has a score or runs etcd beside a peer of another cluster\n%s", a.name, c.dump())
	}
	if why := decisionOf(t, c, a); !strings.Contains(why, "never moved aside for another cluster") {
		t.Fatalf("published decision %q", why)
	}
	if len(backups(t, a)) != 0 {
		t.Fatal("data of its own was moved aside for another cluster")
	}
	a.must("stop", ocfSuccess)
	if err := os.Rename(a.params["data_dir"], a.params["data_dir"]+".foreign-again"); err != nil {
		t.Fatal(err)
	}
	a.must("start", ocfSuccess)
	catchUpAndPromote(t, a, b)
	if got := a.keys("/k/"); len(got) != len(acked) {
		t.Fatalf("%s has %d keys, want the peer's %d: %v", a.name, len(got), len(acked), got)
	}
}

// decisionOf is the reason n published for neither leading nor joining.
func decisionOf(t *testing.T, c *cluster, n *node) string {
	t.Helper()
	why, _, err := c.store.Get(context.Background(), n.name, etcdnode.AttrDecision, attrs.Reboot)
	if err != nil {
		t.Fatal(err)
	}
	return why
}

// TestServedClusterNeverRecreated: both data disks missing after a power loss (the data dirs
// empty where the disks did not mount) looks like a first boot, and created a new, empty
// cluster. The CIB's record of the served cluster makes both refuse, naming it; when the disks
// are back, the cluster comes back with every acknowledged write; only the administrator's
// start-empty lets two nodes without data create a new one.
func TestServedClusterNeverRecreated(t *testing.T) {
	c := newCluster(t)
	leader, other := formCluster(t, c)
	acked := writeKeys(t, leader, 0, 10)
	served, err := etcdnode.ReadServed(context.Background(), c.store)
	if err != nil || served == 0 {
		t.Fatalf("no served cluster recorded after the monitors: %x, %v", served, err)
	}
	ids := memberIDs(t, leader)
	for _, n := range []*node{leader, other} {
		n.fence() // the site's power loss
	}
	unmount := func(n *node) {
		if err := os.Rename(n.params["data_dir"], n.params["data_dir"]+".disk"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(n.params["data_dir"], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mount := func(n *node) {
		if err := os.Remove(n.params["data_dir"]); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(n.params["data_dir"]+".disk", n.params["data_dir"]); err != nil {
			t.Fatal(err)
		}
	}
	a, b := c.nodes["node1"], c.nodes["node2"]
	unmount(a)
	unmount(b)
	startBoth := func() {
		for _, n := range []*node{a, b} {
			n.must("start", ocfSuccess)
		}
		for _, n := range []*node{a, b} {
			n.must("monitor", ocfSuccess)
		}
	}
	startBoth()
	for _, n := range []*node{a, b} {
		if _, ok := n.score(); ok {
			t.Fatalf("%s may lead with no data while cluster %x was served\n%s", n.name, served, c.dump())
		}
	}
	if why := decisionOf(t, c, a); !strings.Contains(why, fmt.Sprintf("start-empty --give-up %x", served)) {
		t.Fatalf("%s's published decision %q does not name the way out", a.name, why)
	}

	// The disks mount: the cluster comes back from its data.
	for _, n := range []*node{a, b} {
		n.must("stop", ocfSuccess)
		mount(n)
	}
	startBoth()
	promoteBothMembers(t, c, ids, false)
	sameKeys(t, a, acked)

	// Both disks lost for good: the administrator gives the cluster up; a new one starts.
	for _, n := range []*node{a, b} {
		n.fence()
		if err := os.RemoveAll(n.params["data_dir"]); err != nil {
			t.Fatal(err)
		}
	}
	if err := unblock.GiveUpServed(context.Background(), c.store); err != nil {
		t.Fatal(err)
	}
	startBoth()
	fresh, _ := promoteTheScored(t, c)
	if got := fresh.keys("/k/"); len(got) != 0 {
		t.Fatalf("the new cluster holds %d keys of the given-up one", len(got))
	}
}

// TestWedgedEtcd: a stopped (SIGSTOP) etcd makes the fast monitor fail within liveness_timeout
// instead of hanging, and stop kills it without a grace period and frees its ports; the watcher
// reports nothing for a stop the agent made.
func TestWedgedEtcd(t *testing.T) {
	c := newCluster(t)
	a := c.nodes["node1"]
	a.must("start", ocfSuccess)
	a.must("promote", ocfSuccess)
	a.kill(19) // SIGSTOP
	if out := a.must("monitor", ocfGeneric); !strings.Contains(out, "did not answer its status within 2s: frozen") {
		t.Fatalf("monitor of a frozen etcd:\n%s", out)
	}
	if out := a.must("stop", ocfSuccess); !strings.Contains(out, "without a grace period") {
		t.Fatalf("stop of a frozen etcd:\n%s", out)
	}
	a.must("monitor", ocfNotRunning)
	// The watcher's liveness read may find the freeze too, racing the monitor, and report it:
	// that is its job. The stop's kill must not be reported as etcd exiting.
	log, err := os.ReadFile(a.params["log_file"])
	if err != nil {
		t.Fatal(err)
	}
	frozen := strings.Count(string(log), "did not answer its status: frozen; reporting the failure")
	if strings.Contains(string(log), "etcd exited: reporting the failure") || a.failuresReported() != frozen {
		t.Fatalf("a stop by the agent was reported: %d failures, %d of them the watcher's finding of the freeze", a.failuresReported(), frozen)
	}
	// Ports are free: a fresh start and promote reuse them at once.
	a.must("start", ocfSuccess)
	a.must("promote", ocfSuccess)
	a.must("monitor", ocfPromoted)
}

// TestMonitorTakesTheFrozenMark: once etcd was found frozen (by the watcher, or here by a
// monitor), a monitor fails on the mark instead of waiting out liveness_timeout again: Pacemaker
// runs one operation of a resource at a time, so that wait would hold back the recovery.
func TestMonitorTakesTheFrozenMark(t *testing.T) {
	c := newCluster(t)
	a := c.nodes["node1"]
	a.must("start", ocfSuccess)
	a.must("promote", ocfSuccess)
	a.kill(syscall.SIGSTOP)
	a.must("monitor", ocfGeneric)
	if out := a.must("monitor", ocfGeneric); !strings.Contains(out, "within 2s: frozen (found so already: ") {
		t.Fatalf("monitor of an etcd already found frozen:\n%s", out)
	}
	if out := a.must("stop", ocfSuccess); !strings.Contains(out, "without a grace period") {
		t.Fatalf("stop of a frozen etcd:\n%s", out)
	}
}

// TestCrashReported: an etcd that dies under either node is reported to the cluster by the
// watcher at once (what crm_resource --fail does on a cluster; the file store counts it), once.
func TestCrashReported(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	for _, n := range []*node{second, first} {
		n.kill(syscall.SIGKILL)
		until(t, n.name+"'s crash reported", func() bool { return n.failuresReported() == 1 })
		// What Pacemaker does with the report: stop the instance, tell the peer, start again.
		n.must("stop", ocfSuccess)
		other := first
		if n == first {
			other = second
		}
		other.notify("stop", n.name)
		n.must("start", ocfSuccess)
		catchUpAndPromote(t, n, other)
	}
	if n := first.failuresReported(); n != 1 {
		t.Fatalf("%s: %d failures reported, want the one crash", first.name, n)
	}
}

// TestBadParameters: validate-all and start reject bad configuration with
// OCF_ERR_CONFIGURED and a message naming the parameter.
func TestBadParameters(t *testing.T) {
	c := newCluster(t)
	n := c.nodes["node1"]
	good := n.params["node_ip_map"]
	ca := filepath.Join(c.dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := []struct{ param, value, want string }{
		{"node_ip_map", "", "node_ip_map"},
		{"node_ip_map", "node1:127.0.0.1", "node_ip_map"},
		{"node_ip_map", "node1:127.0.0.1;node2:not-an-ip", "node_ip_map"},
		{"node_ip_map", "node1:127.0.0.1;node2:127.0.0.2;node3:127.0.0.3", "node_ip_map"},
		{"node_ip_map", "nodeA:127.0.0.1;nodeB:127.0.0.2", "node_ip_map"},
		{"client_port", "70000", "client_port"},
		{"peer_port", "2379", "peer_port"},
		{"runtime", "docker", "runtime"},
		{"data_dir", "relative/dir", "data_dir"},
		{"cert_file", ca, "key_file"},
		{"request_timeout", "soon", "request_timeout"},
		{"attribute_store", "redis", "attribute_store"},
		// Without TLS on an address others reach: refused (loopback, as here, needs nothing).
		{"node_ip_map", "node1:192.0.2.1;node2:192.0.2.2", "cert_file"},
		{"insecure_plaintext", "perhaps", "insecure_plaintext"},
	}
	for _, r := range rows {
		for _, action := range []string{"validate-all", "start"} {
			saved := n.params[r.param]
			n.params[r.param] = r.value
			code, out := n.run(action, nil)
			n.params[r.param] = saved
			if code != ocfConfigured || !strings.Contains(out, "parameter "+r.want) {
				t.Errorf("%s=%q %s: exit %d, want %d naming %s:\n%s", r.param, r.value, action, code, ocfConfigured, r.want, out)
			}
		}
	}
	n.params["node_ip_map"] = good
	n.must("validate-all", ocfSuccess)
	// The test setting allows it.
	n.params["node_ip_map"], n.params["insecure_plaintext"] = "node1:192.0.2.1;node2:192.0.2.2", "true"
	n.must("validate-all", ocfSuccess)
	n.params["node_ip_map"] = good
	delete(n.params, "insecure_plaintext")
}

// TestLearnerIsNeverForcedOver: while the peer is still a learner the voter alone has quorum.
// The learner's instance stopping makes the voter force nothing; the voter's node being fenced
// leaves the learner a learner (it never leads); when the voter comes back it starts as the
// existing member (no force: its learner is still a member) and the learner is promoted.
func TestLearnerIsNeverForcedOver(t *testing.T) {
	c := newCluster(t)
	voter, learner := startAndLead(t, c, c.nodes["node1"], c.nodes["node2"])
	acked := writeKeys(t, voter, 0, 10)

	learner.must("stop", ocfSuccess)
	if out := voter.notify("stop", learner.name); !strings.Contains(out, "nothing to force") {
		t.Fatalf("the voter reacted to its learner stopping:\n%s", out)
	}
	for k, v := range writeKeys(t, voter, 10, 15) {
		acked[k] = v
	}
	learner.must("start", ocfSuccess)
	if members := voter.members(); !members[learner.name] || len(members) != 2 {
		t.Fatalf("learner did not rejoin: %v", members)
	}

	voter.fence()
	if out := learner.notify("stop", voter.name); !strings.Contains(out, "a learner never leads") {
		t.Fatalf("the learner did not stand back:\n%s", out)
	}
	learner.must("monitor", ocfSuccess)
	if s, ok := learner.score(); ok && s > 0 {
		t.Fatalf("a learner without its voter has promotion score %d", s)
	}

	voter.must("start", ocfSuccess)
	if s, ok := voter.score(); !ok || s <= 0 {
		t.Fatalf("the returning voter may not lead\n%s", c.dump())
	}
	if out := voter.must("promote", ocfSuccess); strings.Contains(out, "force_new_cluster=true") || !strings.Contains(out, "start-existing") {
		t.Fatalf("the voter did not start as the existing member:\n%s", out)
	}
	learner.notify("promote", voter.name)
	catchUpAndPromote(t, learner, voter)
	sameKeys(t, learner, acked)
}

// TestUnreadableDataNeverEmpty: a data dir that holds a member's database without its WAL is not
// "no data": the start fails on that node, the reason is published for tnfctl status, and no
// cluster is created from it; once the administrator moves it away, the node starts empty
// (unless require_mountpoint is set and the folder is no mount point).
func TestUnreadableDataNeverEmpty(t *testing.T) {
	c := newCluster(t)
	a := c.nodes["node1"]
	db := filepath.Join(a.params["data_dir"], "member", "snap", "db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, []byte("a database whose WAL is gone"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := a.run("start", nil)
	if code == ocfSuccess || !strings.Contains(out, "without a WAL") {
		t.Fatalf("start on a database without its WAL: exit %d\n%s", code, out)
	}
	why, _, err := c.store.Get(context.Background(), a.name, etcdnode.AttrDecision, attrs.Reboot)
	if err != nil || !strings.Contains(why, "without a WAL") {
		t.Fatalf("published decision %q (%v)", why, err)
	}
	if a.pid() != 0 {
		t.Fatal("etcd runs")
	}
	if err := os.RemoveAll(filepath.Join(a.params["data_dir"], "member")); err != nil {
		t.Fatal(err)
	}
	// An empty folder where a disk did not mount: with require_mountpoint, not "no data".
	code, out = a.run("start", map[string]string{"OCF_RESKEY_require_mountpoint": "true"})
	if code == ocfSuccess || !strings.Contains(out, "is not a mount point") {
		t.Fatalf("start on a data dir that is not a mount point, require_mountpoint set: exit %d\n%s", code, out)
	}
	a.must("start", ocfSuccess)
}
