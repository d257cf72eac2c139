package restore

import (
	"errors"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
)

// TestCheck goes through every rule of Check, alone and where two meet: which refusal wins, when
// a recorded restore is resumed, replaced or makes the run a no-op.
func TestCheck(t *testing.T) {
	snap := etcddata.Snapshot{SHA256: "aaaa", Revision: 10, Members: []etcddata.SnapshotMember{
		{ID: 1, Name: "node1", PeerURLs: []string{"https://10.0.0.1:2380"}},
		{ID: 2, Name: "node2", PeerURLs: []string{"https://10.0.0.2:2380"}},
	}}
	base := func() Facts {
		return Facts{Self: "node1", Peer: "node2", Nodes: map[string]string{"node1": "10.0.0.1", "node2": "10.0.0.2"}, Snapshot: snap,
			Layer: "0.3.0", PeerLayer: "0.3.0", EtcdVersion: "3.5.21", PeerEtcdVersion: "3.5.21",
			LiveIdentity: "uid-1", SnapshotIdentity: "uid-1", HandedOver: true, SnapshotHandover: HandoverCompleted}
	}
	at := func(node, sha, step string) *etcdnode.Restore {
		return &etcdnode.Restore{Node: node, Snapshot: sha, Cluster: "c", Step: step, Since: time.Unix(0, 0)}
	}
	for _, tc := range []struct {
		name   string
		change func(*Facts)
		want   Plan
		err    error
	}{
		{"a new restore", func(*Facts) {}, Begin, nil},
		{"guest", func(f *Facts) { f.Guest = "operator" }, 0, ErrGuest},
		{"guest beats a restore under way", func(f *Facts) { f.Guest = "operator"; f.Recorded = at("node1", "aaaa", etcdnode.RestoreStopping) }, 0, ErrGuest},
		{"resume here, same snapshot", func(f *Facts) { f.Recorded = at("node1", "aaaa", etcdnode.RestoreRestoring) }, Resume, nil},
		{"resume skips the checks of a new restore", func(f *Facts) {
			f.Recorded = at("node1", "aaaa", etcdnode.RestoreStarting)
			f.Installer, f.PeerLayer, f.LiveIdentity = "manifest", "0.2.0", "uid-2"
		}, Resume, nil},
		{"no resume while Pacemaker would not act", func(f *Facts) {
			f.Recorded = at("node1", "aaaa", etcdnode.RestoreStopping)
			f.NotManaged = "maintenance"
		}, 0, ErrNotManaged},
		{"under way here, another snapshot", func(f *Facts) { f.Recorded = at("node1", "bbbb", etcdnode.RestoreStopping) }, 0, ErrUnderWay},
		{"under way on the peer, a member", func(f *Facts) {
			f.Recorded, f.RecordedNodeMember = at("node2", "aaaa", etcdnode.RestoreStopping), true
		}, 0, ErrUnderWay},
		{"under way on the peer, gone: replaced", func(f *Facts) { f.Recorded = at("node2", "aaaa", etcdnode.RestoreRestoring) }, Begin, nil},
		{"a replaced restore is checked as a new one", func(f *Facts) {
			f.Recorded, f.Installer = at("node2", "aaaa", etcdnode.RestoreRestoring), "manifest"
		}, 0, ErrInstaller},
		{"done from this snapshot: nothing", func(f *Facts) { f.Recorded = at("node1", "aaaa", etcdnode.RestoreDone) }, Nothing, nil},
		{"done from this snapshot on the peer: nothing", func(f *Facts) { f.Recorded = at("node2", "aaaa", etcdnode.RestoreDone) }, Nothing, nil},
		{"done from this snapshot, again", func(f *Facts) { f.Recorded, f.Again = at("node1", "aaaa", etcdnode.RestoreDone), true }, Begin, nil},
		{"done from another snapshot", func(f *Facts) { f.Recorded = at("node1", "bbbb", etcdnode.RestoreDone) }, Begin, nil},
		{"installer's etcd", func(f *Facts) { f.Installer = "manifest" }, 0, ErrInstaller},
		{"peer of another release", func(f *Facts) { f.PeerLayer = "0.2.0" }, 0, ErrOtherRelease},
		{"peer's release not known (it is down)", func(f *Facts) { f.PeerLayer = "" }, Begin, nil},
		{"installer beats the peer's release", func(f *Facts) { f.Installer, f.PeerLayer = "manifest", "0.2.0" }, 0, ErrInstaller},
		{"peer's etcd of an older minor", func(f *Facts) { f.PeerEtcdVersion = "3.4.30" }, 0, ErrOtherRelease},
		{"peer's etcd of a newer minor", func(f *Facts) { f.PeerEtcdVersion = "3.6.4" }, Begin, nil},
		{"peer's etcd of another patch", func(f *Facts) { f.PeerEtcdVersion = "3.5.9" }, Begin, nil},
		{"peer's etcd not known", func(f *Facts) { f.PeerEtcdVersion = "" }, Begin, nil},
		{"Pacemaker would not stop etcd", func(f *Facts) { f.NotManaged = "maintenance mode" }, 0, ErrNotManaged},
		{"the snapshot in the data dir", func(f *Facts) { f.SnapshotInDataDir = true }, 0, ErrSnapshotPlace},
		{"another release beats an unmanaged etcd", func(f *Facts) { f.PeerLayer, f.NotManaged = "0.2.0", "x" }, 0, ErrOtherRelease},
		{"members of other nodes", func(f *Facts) { f.Nodes = map[string]string{"a": "10.0.0.1", "b": "10.0.0.2"} }, 0, ErrOtherCluster},
		{"members of our names at other addresses", func(f *Facts) { f.Nodes = map[string]string{"node1": "10.9.0.1", "node2": "10.9.0.2"} }, 0, ErrOtherCluster},
		{"one member is ours (the other node replaced)", func(f *Facts) { f.Nodes = map[string]string{"node1": "10.0.0.1", "node3": "10.0.0.3"} }, Begin, nil},
		{"no members", func(f *Facts) { f.Snapshot.Members = nil }, 0, ErrOtherCluster},
		{"another cluster's kube-system", func(f *Facts) { f.SnapshotIdentity = "uid-2" }, 0, ErrOtherCluster},
		{"live identity not known", func(f *Facts) { f.LiveIdentity, f.SnapshotIdentity = "", "uid-2" }, Begin, nil},
		{"no kube-system in the snapshot", func(f *Facts) { f.SnapshotIdentity = "" }, Begin, nil},
		{"members beat the identity", func(f *Facts) { f.Snapshot.Members, f.SnapshotIdentity = nil, "uid-2" }, 0, ErrOtherCluster},
		{"before the handover", func(f *Facts) { f.SnapshotHandover = HandoverNotCompleted }, 0, ErrBeforeHandover},
		{"before the handover, accepted", func(f *Facts) { f.SnapshotHandover, f.BeforeHandover = HandoverNotCompleted, true }, Begin, nil},
		{"after the handover, accepted before it", func(f *Facts) { f.BeforeHandover = true }, Begin, nil},
		{"another cluster beats an accepted before the handover", func(f *Facts) {
			f.SnapshotHandover, f.BeforeHandover, f.SnapshotIdentity = HandoverNotCompleted, true, "uid-2"
		}, 0, ErrOtherCluster},
		{"before the handover, none here", func(f *Facts) { f.SnapshotHandover, f.HandedOver = HandoverNotCompleted, false }, Begin, nil},
		{"no Etcd object", func(f *Facts) { f.SnapshotHandover = NoEtcdObject }, Begin, nil},
		{"another cluster beats before the handover", func(f *Facts) { f.SnapshotHandover, f.SnapshotIdentity = HandoverNotCompleted, "uid-2" }, 0, ErrOtherCluster},
	} {
		f := base()
		tc.change(&f)
		got, err := Check(f)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		case tc.err == nil && (err != nil || got != tc.want):
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

func TestURLHost(t *testing.T) {
	for in, want := range map[string]string{"https://10.0.0.1:2380": "10.0.0.1", "https://[fd00::2]:2380": "fd00::2", "http://host": "host", "%": ""} {
		if got := urlHost(in); got != want {
			t.Errorf("urlHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/var/lib/etcd/snapshot.db", "/var/lib/etcd", true},
		{"/var/lib/etcd/member/snap/db", "/var/lib/etcd/", true},
		{"/var/lib/etcd-backup/snapshot.db", "/var/lib/etcd", false},
		{"/var/lib/etcd/../backup/s.db", "/var/lib/etcd", false},
		{"/home/core/backup/s.db", "/var/lib/etcd", false},
	} {
		if got := within(tc.path, tc.dir); got != tc.want {
			t.Errorf("within(%q, %q) = %v", tc.path, tc.dir, got)
		}
	}
}

// TestCheckAbort: a restore is aborted only while it stops etcd, from its node or once that node
// has left.
func TestCheckAbort(t *testing.T) {
	at := func(node, step string) *etcdnode.Restore { return &etcdnode.Restore{Node: node, Step: step} }
	for _, tc := range []struct {
		name   string
		rec    *etcdnode.Restore
		member bool
		err    error
	}{
		{"none recorded", nil, true, ErrNothingToAbort},
		{"done", at("node1", etcdnode.RestoreDone), true, ErrNothingToAbort},
		{"stopping, here", at("node1", etcdnode.RestoreStopping), true, nil},
		{"stopping, on the peer, a member", at("node2", etcdnode.RestoreStopping), true, ErrUnderWay},
		{"stopping, on the peer, gone", at("node2", etcdnode.RestoreStopping), false, nil},
		{"restoring, here", at("node1", etcdnode.RestoreRestoring), true, ErrUnderWay},
		{"starting, on the peer, gone", at("node2", etcdnode.RestoreStarting), false, ErrUnderWay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckAbort(tc.rec, "node1", tc.member); !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("CheckAbort = %v, want %v", err, tc.err)
			}
		})
	}
}

// TestReassertsHandover: only a snapshot whose Etcd object does not record the handover, restored
// where the handover completed, has its conditions set again.
func TestReassertsHandover(t *testing.T) {
	for _, tc := range []struct {
		handedOver bool
		snapshot   Handover
		want       bool
	}{
		{true, HandoverNotCompleted, true},
		{true, HandoverCompleted, false},
		{true, NoEtcdObject, false},
		{false, HandoverNotCompleted, false},
		{false, HandoverCompleted, false},
		{false, NoEtcdObject, false},
	} {
		if got := (Facts{HandedOver: tc.handedOver, SnapshotHandover: tc.snapshot}).ReassertsHandover(); got != tc.want {
			t.Errorf("handed over %v, the snapshot's handover %d: %v, want %v", tc.handedOver, tc.snapshot, got, tc.want)
		}
	}
}
