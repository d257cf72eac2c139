package unblock

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

func TestLossRefusal(t *testing.T) {
	const cluster, other = 0xc1, 0xd2
	peer := decision.Data{Known: true, Present: true, ClusterID: cluster, Index: 180}
	for _, tc := range []struct {
		name       string
		local      etcddata.Info
		peer       decision.Data
		peerMember bool
		want       string // "" for accepted
	}{
		{"older", etcddata.Info{Present: true, ClusterID: cluster, Index: 120}, peer, false, ""},
		{"removed, even at the same index", etcddata.Info{Present: true, ClusterID: cluster, Index: 180, Removed: true}, peer, false, ""},
		{"learner", etcddata.Info{Present: true, ClusterID: cluster, Index: 180, Learner: true}, peer, false, ""},
		{"another cluster", etcddata.Info{Present: true, ClusterID: other, Index: 500}, peer, false, ""},
		{"peer is a member", etcddata.Info{Present: true, ClusterID: cluster, Index: 120}, peer, true, "live Corosync member"},
		{"not behind", etcddata.Info{Present: true, ClusterID: cluster, Index: 180}, peer, false, "not behind"},
		// The peer was forced alone (a later term): a longer log of the earlier term is behind.
		{"longer, of an earlier term", etcddata.Info{Present: true, ClusterID: cluster, Index: 200, Term: 4}, withTerm(peer, 5), false, ""},
		{"longer, of the same term", etcddata.Info{Present: true, ClusterID: cluster, Index: 200, Term: 5}, withTerm(peer, 5), false, "not behind"},
		{"no local data", etcddata.Info{}, peer, false, "/var/lib/etcd: no etcd data to lead from"},
		{"peer published none", etcddata.Info{Present: true, ClusterID: cluster, Index: 120}, decision.Data{Known: true}, false, "published no etcd data"},
		{"peer never published", etcddata.Info{Present: true, ClusterID: cluster, Index: 120}, decision.Data{}, false, "published no etcd data"},
	} {
		l := Loss{Self: "node2", Peer: "node1", DataDir: "/var/lib/etcd", Local: tc.local, PeerData: tc.peer}
		err := l.Refusal(tc.peerMember)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want a refusal with %q", tc.name, err, tc.want)
		}
		if tc.name == "not behind" && !errors.Is(err, ErrNothingToGiveUp) {
			t.Errorf("%s: %v is not ErrNothingToGiveUp", tc.name, err)
		}
	}
}

func withTerm(d decision.Data, term uint64) decision.Data { d.Term = term; return d }

func TestLossDescribe(t *testing.T) {
	peer := decision.Data{Known: true, Present: true, ClusterID: 0xc1, Index: 180}
	for _, tc := range []struct {
		name  string
		local etcddata.Info
		want  []string
	}{
		{"removed", etcddata.Info{Present: true, ClusterID: 0xc1, Index: 120, Removed: true},
			[]string{"node2's etcd data: cluster c1, raft index 120, a member that left its cluster",
				"node1 last published: cluster c1, raft index 180",
				"gives up what node1 accepted after raft index 120: 60 entries by its last record",
				"revisions raised by 1000000000"}},
		{"learner at the same index", etcddata.Info{Present: true, ClusterID: 0xc1, Index: 180, Learner: true},
			[]string{"a learner that may not have caught up", "node1's last record is not beyond raft index 180"}},
		{"another cluster", etcddata.Info{Present: true, ClusterID: 0xd2, Index: 5},
			[]string{"gives up all of node1's data"}},
	} {
		var out bytes.Buffer
		Loss{Self: "node2", Peer: "node1", Local: tc.local, PeerData: peer}.Describe(&out)
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: %q not in:\n%s", tc.name, w, out.String())
			}
		}
	}
}

// TestPeerRecordOnlyInAKnownContract: the peer's record is read when its contract is readable
// (none published is contract 1); beside a contract too far away or one that is no number it is
// a refusal naming why, never a guess at the record.
func TestPeerRecordOnlyInAKnownContract(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		contract string // "" publishes none
		refused  bool
	}{{"", false}, {strconv.Itoa(contract.Version), false}, {strconv.Itoa(contract.Version + 2), true}, {"v3", true}} {
		store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
		if tc.contract != "" {
			if err := store.Set(ctx, "node2", contract.Attr, tc.contract, attrs.Forever); err != nil {
				t.Fatal(err)
			}
		}
		// A record of a format no agent of this contract writes.
		if err := store.Set(ctx, "node2", etcdnode.AttrData, "c1:180:witness", attrs.Forever); err != nil {
			t.Fatal(err)
		}
		_, err := peerRecord(ctx, store, "node2")
		switch {
		case tc.refused && !errors.Is(err, ErrUnreadablePeer):
			t.Errorf("contract %q: %v, want a refusal (ErrUnreadablePeer)", tc.contract, err)
		case !tc.refused && (err == nil || errors.Is(err, ErrUnreadablePeer)):
			t.Errorf("contract %q: %v, want the record read (and found malformed)", tc.contract, err)
		}
	}
}
