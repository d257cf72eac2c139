//go:build integration

package etcdagent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
	"github.com/tnf-layer/tnf-layer/internal/testutil/walfault"
)

// TestAcceptDataLoss: the leaver left gracefully, the stayer took writes alone and died. The
// leaver refuses to lead from its removed member's data until an administrator gives up the
// stayer's record (what tnfctl accept-data-loss writes; the command itself runs in the cluster
// scenario): then the leaver restores its own keyspace as a new cluster of one, with what it had
// and none of the stayer's later writes, and revisions above anything served before. When the
// stayer returns it joins that cluster as a learner (its data of the old cluster moved aside),
// its acceptance is deleted, and it is promoted.
func TestAcceptDataLoss(t *testing.T) {
	c := newCluster(t)
	stayer, leaver := formCluster(t, c)
	kept := writeKeys(t, stayer, 0, 10)
	oldCluster := leaver.memberList().Header.ClusterId
	if out := leaver.must("stop", ocfSuccess); !strings.Contains(out, "left the member list") {
		t.Fatalf("%s's stop did not leave:\n%s", leaver.name, out)
	}
	writeKeys(t, stayer, 10, 30)
	lastRev := stayer.put("/k/last", "given up")
	stayer.must("monitor", ocfPromoted) // publishes its newer index
	stayer.fence()

	leaver.must("start", ocfSuccess)
	if s, ok := leaver.score(); ok {
		t.Fatalf("the removed member got promotion score %d before anything was given up", s)
	}
	record, ok, err := c.store.Get(context.Background(), stayer.name, etcdnode.AttrData, attrs.Forever)
	if err != nil || !ok {
		t.Fatalf("%s's record: %q %v %v", stayer.name, record, ok, err)
	}
	peerData, err := etcdnode.ParseRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	loss := unblock.Loss{Self: leaver.name, Peer: stayer.name, PeerData: peerData}
	if err := loss.Accept(context.Background(), c.store); err != nil {
		t.Fatal(err)
	}

	leaver.must("monitor", ocfSuccess)
	if _, ok := leaver.score(); !ok {
		t.Fatalf("no promotion score once the stayer's data was given up\n%s", c.dump())
	}
	if out := leaver.must("promote", ocfSuccess); !strings.Contains(out, "restored the local data as a new cluster") {
		t.Fatalf("promote did not restore:\n%s", out)
	}
	leaver.must("monitor", ocfPromoted)
	if m := leaver.members(); len(m) != 1 || m[stayer.name] {
		t.Fatalf("members after the restore: %v", m)
	}
	if id := leaver.memberList().Header.ClusterId; id == oldCluster {
		t.Fatalf("the restored cluster kept the cluster ID %x", id)
	}
	sameKeys(t, leaver, kept)
	if got := leaver.keys("/k/"); len(got) != len(kept) {
		t.Fatalf("%d keys after the restore, want the %d the leaver had", len(got), len(kept))
	}
	if rev := leaver.put("/k/after", "restored"); rev <= lastRev || rev < etcddata.RevisionBump {
		t.Fatalf("first revision after the restore %d, want above %d and the bump %d", rev, lastRev, etcddata.RevisionBump)
	}
	kept["/k/after"] = "restored"

	stayer.must("start", ocfSuccess)
	if m := leaver.members(); len(m) != 2 {
		t.Fatalf("%s did not join as a learner: %v", stayer.name, m)
	}
	if len(backups(t, stayer)) == 0 {
		t.Fatalf("%s's given-up data was not moved aside", stayer.name)
	}
	if v, ok, _ := c.store.Get(context.Background(), leaver.name, etcdnode.AttrGivenUp, attrs.Forever); ok {
		t.Fatalf("the acceptance %q is still set after the given-up data moved aside", v)
	}
	catchUpAndPromote(t, stayer, leaver)
	sameKeys(t, stayer, kept)
	if got := stayer.keys("/k/last"); len(got) != 0 {
		t.Fatalf("a given-up write came back: %v", got)
	}
}

// TestForceAfterATornWALRecord: both nodes lost their power and the WAL of the node with the
// newest data ends in a record the power cut interrupted (never synced, so never acknowledged).
// That node, back alone, forces a cluster of one from its data: the torn record is cut off as
// etcd itself does at start, every acknowledged key is there, and the agent says what it cut.
// Before, reading the WAL to commit its tail failed on that record, and the node could never lead.
func TestForceAfterATornWALRecord(t *testing.T) {
	c := newCluster(t)
	first, second := formCluster(t, c)
	acked := writeKeys(t, first, 0, 20)
	for _, n := range []*node{first, second} {
		n.must("monitor", ocfPromoted)
		n.fence()
	}
	node1 := c.nodes["node1"]
	if err := walfault.TearLast(filepath.Join(node1.params["data_dir"], "member", "wal")); err != nil {
		t.Fatal(err)
	}
	node1.must("start", ocfSuccess)
	if _, ok := node1.score(); !ok {
		t.Fatalf("node1 may not lead from its data with a torn last record\n%s", c.dump())
	}
	if out := node1.must("promote", ocfSuccess); !strings.Contains(out, "cut short by the crash") {
		t.Errorf("node1's promote does not say it cut the torn record off:\n%s", out)
	}
	sameKeys(t, node1, acked)
}
