//go:build integration

package etcdagent_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// TestGracefulLeave: a planned stop of either member (the one that led the cold boot, then the
// other) removes it from the member list first: the peer keeps serving alone at once, with no
// notification, no monitor and nothing forced; the post-stop notification finds it the only
// voter. The stopped node comes back as a learner and is promoted; no acknowledged write is lost.
func TestGracefulLeave(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	acked := writeKeys(t, first, 0, 20)
	for i, pair := range [][2]*node{{first, second}, {second, first}} {
		leaving, staying := pair[0], pair[1]
		out := leaving.must("stop", ocfSuccess)
		if !strings.Contains(out, "left the member list") {
			t.Fatalf("%s's stop did not leave:\n%s", leaving.name, out)
		}
		// Served at once by the one that stayed: it never lost its quorum.
		for k, v := range writeKeys(t, staying, 100*(i+1), 100*(i+1)+10) {
			acked[k] = v
		}
		if m := staying.members(); len(m) != 1 {
			t.Fatalf("%s's member list after the leave: %v", staying.name, m)
		}
		staying.must("monitor", ocfPromoted)
		if out := staying.notify("stop", leaving.name); !strings.Contains(out, "already the only voter") {
			t.Fatalf("%s's post-stop notification:\n%s", staying.name, out)
		}
		leaving.must("monitor", ocfNotRunning)
		leaving.must("start", ocfSuccess)
		if m := staying.members(); !m[leaving.name] {
			t.Fatalf("%s did not come back as a learner: %v", leaving.name, m)
		}
		catchUpAndPromote(t, leaving, staying)
		sameKeys(t, leaving, acked)
	}
	if logs := readLog(t, c); strings.Contains(logs, "forcing a new cluster") {
		t.Fatalf("a planned stop forced a cluster:\n%s", logs)
	}
	// A removed member's etcd exits by itself: that is no failure.
	for _, n := range []*node{first, second} {
		if f := n.failuresReported(); f != 0 {
			t.Fatalf("%s: a graceful leave was reported as %d failures", n.name, f)
		}
	}
}

// TestBothStopAtOnce: both members are stopped at the same moment (a site shutdown). Exactly one
// leaves and the other stops as the last voter, without any fixed wait; the next cold boot
// starts from the last voter's data with no admin step and loses no acknowledged write.
func TestBothStopAtOnce(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	acked := writeKeys(t, first, 0, 20)
	outs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range []*node{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := n.run("stop", nil)
			mu.Lock()
			defer mu.Unlock()
			if code != ocfSuccess {
				t.Errorf("%s stop: exit %d\n%s", n.name, code, out)
			}
			outs[n.name] = out
		}()
	}
	wg.Wait()
	left, last := "", ""
	for name, out := range outs {
		switch {
		case strings.Contains(out, "left the member list"):
			left += name
		case strings.Contains(out, "stopping as the last voter"):
			last += name
		}
	}
	if left == "" || last == "" || len(left)+len(last) != len("node1node2") {
		t.Fatalf("want one node to leave and the other to stay the last voter; left %q, last %q\n%v", left, last, outs)
	}
	leader, other := startAndLead(t, c, c.nodes["node1"], c.nodes["node2"])
	if leader.name != last {
		t.Fatalf("%s led the cold boot, want the last voter %s", leader.name, last)
	}
	catchUpAndPromote(t, other, leader)
	sameKeys(t, other, acked)
	sameKeys(t, leader, acked)
}

// TestStopWithoutLeave: with graceful_leave=false, and for a node whose peer is gone, a stop
// only stops etcd and keeps the member list.
func TestStopWithoutLeave(t *testing.T) {
	c := newCluster(t)
	for _, n := range c.nodes {
		n.params["graceful_leave"] = "false"
	}
	first, second := formCluster(t, c)
	if out := first.must("stop", ocfSuccess); !strings.Contains(out, "graceful leave is turned off") {
		t.Fatalf("stop with graceful_leave=false:\n%s", out)
	}
	second.params["graceful_leave"] = "true"
	if out := second.must("stop", ocfSuccess); !strings.Contains(out, "decision=stop-only") {
		t.Fatalf("stop of the member left without quorum:\n%s", out)
	}
}

func readLog(t *testing.T, c *cluster) string {
	t.Helper()
	var b strings.Builder
	for _, n := range c.nodes {
		n.mu.Lock()
		b.WriteString(n.agentLog.String())
		n.mu.Unlock()
	}
	return b.String()
}

// TestBothCrashDecidesOnFreshRecords: both members crash after writes their published records
// do not show yet (records are refreshed by the monitor), and Pacemaker starts both instances in
// one transition, as it does when both nodes come back. Each start waits for the other's fresh
// record (the peer is in the start's notify_start_uname), so exactly one may lead: neither
// decides on the stale record and claims a lead its peer then takes from it. (In a boot in which
// one node gave its pair up: otherwise both start their members, TestColdBootStartsBothMembers.)
func TestBothCrashDecidesOnFreshRecords(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	first.must("monitor", ocfPromoted)
	second.must("monitor", ocfPromoted)
	acked := writeKeys(t, first, 0, 50) // not published: no monitor after them
	first.fence()
	second.fence()
	withoutPair(t, first)

	startBoth(t, second, first)
	// No monitor in between: the starts alone decided.
	leader, other := promoteTheScored(t, c)
	catchUpAndPromote(t, other, leader)
	sameKeys(t, other, acked)
}

// TestPeerOfAnotherContract: both nodes went down; the peer's disk holds what an agent two
// releases ahead published (its contract, a record in a format this agent does not know). The
// node that boots alone starts without a promotion score and says why, instead of failing on the
// record or guessing what it means. Once the peer publishes a contract it reads (the peer's
// layer updated or rolled back), both start their members again, with every acknowledged key.
func TestPeerOfAnotherContract(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	acked := writeKeys(t, first, 0, 20)
	first.must("monitor", ocfPromoted)
	second.must("monitor", ocfPromoted)
	ctx := context.Background()
	published := func(n *node, name string) string {
		v, ok, err := c.store.Get(ctx, n.name, name, attrs.Forever)
		if err != nil || !ok {
			t.Fatalf("%s's %s: %v (published %v)", n.name, name, err, ok)
		}
		return v
	}
	if v := published(second, contract.Attr); v != strconv.Itoa(contract.Version) {
		t.Fatalf("%s publishes contract %q, want %d", second.name, v, contract.Version)
	}
	record := published(second, etcdnode.AttrData)
	ids := memberIDs(t, first)
	first.fence()
	second.fence()
	for name, value := range map[string]string{contract.Attr: strconv.Itoa(contract.Version + 2), etcdnode.AttrData: record + ":witness"} {
		if err := c.store.Set(ctx, second.name, name, value, attrs.Forever); err != nil {
			t.Fatal(err)
		}
	}

	first.must("start", ocfSuccess)
	if s, ok := first.score(); ok {
		t.Fatalf("%s got promotion score %d beside a peer of contract %d\n%s", first.name, s, contract.Version+2, c.dump())
	}
	want := contract.Unreadable(second.name, contract.Version+2)
	if code, out := first.run("promote", nil); code == ocfSuccess || !strings.Contains(out, want) {
		t.Fatalf("promote beside a peer of contract %d: exit %d, want a refusal saying %q:\n%s", contract.Version+2, code, want, out)
	}
	if v, _, _ := c.store.Get(ctx, first.name, etcdnode.AttrDecision, attrs.Reboot); !strings.Contains(v, want) {
		t.Fatalf("%s's decision for tnfctl status: %q, want it to say %q", first.name, v, want)
	}
	first.must("stop", ocfSuccess)

	for name, value := range map[string]string{contract.Attr: strconv.Itoa(contract.Version), etcdnode.AttrData: record} {
		if err := c.store.Set(ctx, second.name, name, value, attrs.Forever); err != nil {
			t.Fatal(err)
		}
	}
	startBoth(t, first, second)
	promoteBothMembers(t, c, ids, false)
	sameKeys(t, second, acked)
}

// startBoth starts both instances in one transition, as Pacemaker does when both nodes come
// back: each start waits for the other's fresh record.
func startBoth(t testing.TB, nodes ...*node) {
	t.Helper()
	both := map[string]string{"OCF_RESKEY_CRM_meta_notify_start_uname": "node1 node2"}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, out := n.run("start", both); code != ocfSuccess {
				t.Errorf("%s start: exit %d\n%s", n.name, code, out)
			}
		}()
	}
	wg.Wait()
}
