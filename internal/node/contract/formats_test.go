package contract_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/identity"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// published is what a node of each contract version writes, value for value as its agents do
// (contract 1: the layer's 0.1.0). A new version adds its own entry; none is ever removed while
// an agent that reads it may run.
var published = map[int]struct {
	forever, reboot map[string]string
	options         map[string]string
}{
	1: {
		forever: map[string]string{
			etcdnode.AttrData:    "7e1c3f0a9b2d4c11:48213",
			etcdnode.AttrTerm:    "57",
			etcdnode.AttrGivenUp: "7e1c3f0a9b2d4c11:48100:learner",
			identity.Attr:        "uuid=4c4c4544-0031-3510-8052-b4c04f4e4d32 macs=52:54:00:aa:bb:01,52:54:00:aa:bb:02",
		},
		reboot: map[string]string{
			etcdnode.AttrInstance:     "started",
			etcdnode.AttrForced:       "2 1764110407",
			etcdnode.AttrLayerVersion: "17a7ebd", // 0.1.0 stamped git describe's commit
			etcdnode.AttrDecision:     "wait: peer node1 has not published its data yet",
		},
		options: map[string]string{etcdnode.PropServed: "7e1c3f0a9b2d4c11"},
	},
}

// TestReadsEveryReadableContract: this agent's readers read what a peer of every contract it
// reads publishes, with the values the peer meant.
func TestReadsEveryReadableContract(t *testing.T) {
	ctx := context.Background()
	for version, p := range published {
		if !contract.Readable(version) {
			continue
		}
		store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
		for lt, values := range map[attrs.Lifetime]map[string]string{attrs.Forever: p.forever, attrs.Reboot: p.reboot} {
			for name, v := range values {
				if err := store.Set(ctx, "node2", name, v, lt); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, v := range p.options {
			if err := store.SetProperty(ctx, name, v); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := etcdnode.ReadContract(ctx, store, "node2"); err != nil || got != version {
			t.Errorf("contract %d: read as %d, %v", version, got, err)
		}
		rec, err := etcdnode.ReadRecord(ctx, store, "node2")
		if want := (decision.Data{Known: true, Present: true, ClusterID: 0x7e1c3f0a9b2d4c11, Index: 48213, Term: 57}); err != nil || rec != want {
			t.Errorf("contract %d: the record read as %+v, %v; want %+v", version, rec, err, want)
		}
		if g, err := etcdnode.ParseRecord(p.forever[etcdnode.AttrGivenUp]); err != nil || !g.Learner || g.Index != 48100 {
			t.Errorf("contract %d: the given-up record read as %+v, %v", version, g, err)
		}
		if served, err := etcdnode.ReadServed(ctx, store); err != nil || served != 0x7e1c3f0a9b2d4c11 {
			t.Errorf("contract %d: the served cluster read as %x, %v", version, served, err)
		}
		if f, err := etcdnode.ParseTally(etcdnode.AttrForced, p.reboot[etcdnode.AttrForced]); err != nil || f.Count != 2 || !f.Last.Equal(time.Unix(1764110407, 0)) {
			t.Errorf("contract %d: the forced count read as %+v, %v", version, f, err)
		}
		machines, ok, err := identity.Published(ctx, store, []string{"node2"})
		if err != nil || !ok || machines["node2"].String() != p.forever[identity.Attr] {
			t.Errorf("contract %d: the machine identity read as %v (%v), %v", version, machines, ok, err)
		}
	}
}

// TestNoContractPublishedIsVersion1: agents of 0.1.0 publish no contract attribute.
func TestNoContractPublishedIsVersion1(t *testing.T) {
	store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
	if got, err := etcdnode.ReadContract(context.Background(), store, "node2"); err != nil || got != 1 {
		t.Fatalf("no contract published: read as %d, %v; want 1", got, err)
	}
}

// TestMalformedContractIsUnreadable: a published value that is no version reads as Malformed,
// which no agent reads, not as an error that would fail the reader's action.
func TestMalformedContractIsUnreadable(t *testing.T) {
	ctx := context.Background()
	store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
	if err := store.Set(ctx, "node2", contract.Attr, "v3", attrs.Forever); err != nil {
		t.Fatal(err)
	}
	if got, err := etcdnode.ReadContract(ctx, store, "node2"); err != nil || got != contract.Malformed || contract.Readable(got) {
		t.Fatalf("contract %q: read as %d, %v; want Malformed, unreadable", "v3", got, err)
	}
}
