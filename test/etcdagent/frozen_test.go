//go:build integration

package etcdagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLeadsDespiteTheStoppedLeadersUncommittedTail: the leader appends entries its follower
// never gets (the follower's etcd is stopped, then killed with them still in its socket), so
// nothing of them is committed; then the leader freezes and Pacemaker stops it. Its record says
// how far it had committed, and the follower's promotion, applied by that leader in that term,
// says the leader committed nothing without it since: the follower leads from its shorter log at
// once, where before it refused as "older" until the leader came back. Every acknowledged write
// is kept; the old leader then joins as a learner.
func TestLeadsDespiteTheStoppedLeadersUncommittedTail(t *testing.T) {
	c := newCluster(t)
	for _, n := range c.nodes {
		// The leader steps down only after an election timeout without its follower: long enough
		// for the unacknowledged proposals below to reach its log while it still leads.
		n.environ = map[string]string{"ETCD_ELECTION_TIMEOUT": "5000"}
	}
	leader, follower := formCluster(t, c)
	if st := leader.status(leader.client()); st.Leader != st.Header.MemberId {
		leader, follower = follower, leader
	}
	acked := writeKeys(t, leader, 0, 10)

	follower.kill(syscall.SIGSTOP)
	cli := leader.client()
	var proposed sync.WaitGroup
	for i := range 3 {
		proposed.Add(1)
		go func() {
			defer proposed.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			if _, err := cli.Put(ctx, fmt.Sprintf("/tail/%d", i), "never acknowledged"); err == nil {
				t.Errorf("a write was acknowledged while the follower's etcd was stopped")
			}
		}()
	}
	proposed.Wait()
	leader.kill(syscall.SIGSTOP)
	follower.kill(syscall.SIGKILL)

	// Pacemaker's part: the follower's crash is reported, its instance stopped; the leader's
	// monitor finds it frozen, its demote kills it and publishes its data, its stop follows.
	until(t, follower.name+"'s crash reported", func() bool { return follower.failuresReported() == 1 })
	follower.must("stop", ocfSuccess)
	leader.must("monitor", ocfGeneric)
	leader.must("demote", ocfSuccess)
	leader.must("stop", ocfSuccess)

	// What proves that the leader needed the follower for every later commit is the follower's
	// promotion, applied in the leader's term (before it, the leader committed alone): without
	// its record, the follower's data is older, as before.
	promoted := filepath.Join(follower.params["state_dir"], "promoted")
	if err := os.Rename(promoted, promoted+".away"); err != nil {
		t.Fatal(err)
	}
	follower.must("start", ocfSuccess)
	if why := decisionOf(t, c, follower); !strings.Contains(why, "is older than peer") {
		t.Fatalf("%s without its promotion's record: %q, want a refusal as older", follower.name, why)
	}
	if err := os.Rename(promoted+".away", promoted); err != nil {
		t.Fatal(err)
	}
	if out := follower.must("monitor", ocfSuccess); !strings.Contains(out, "3 entries beyond were never committed") {
		t.Fatalf("%s did not lead from its log beside the stopped leader's uncommitted tail:\n%s", follower.name, out)
	}
	if _, ok := follower.score(); !ok {
		t.Fatalf("%s may not lead:\n%s", follower.name, c.dump())
	}
	follower.must("promote", ocfSuccess)
	follower.must("monitor", ocfPromoted)
	sameKeys(t, follower, acked)
	if got := follower.keys("/tail/"); len(got) != 0 {
		t.Fatalf("writes never acknowledged are served: %v", got)
	}

	leader.must("start", ocfSuccess)
	catchUpAndPromote(t, leader, follower)
	sameKeys(t, leader, acked)
}
