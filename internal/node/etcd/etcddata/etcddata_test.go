package etcddata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/raft/v3/raftpb"
	"golang.org/x/sys/unix"
)

func TestInspectMissing(t *testing.T) {
	info, err := Inspect(filepath.Join(t.TempDir(), "nothing"))
	if err != nil || info.Present {
		t.Fatalf("missing dir: %+v, %v", info, err)
	}
}

// TestInspectFailsClosed: a data dir is "no data" only when it holds no member's files at all;
// one it cannot read, or a database without its WAL, is an error.
func TestInspectFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // path in the data dir: content ("/" at the end: a folder)
		err   bool
	}{
		{"empty", nil, false},
		{"an empty WAL folder", map[string]string{"member/wal/": ""}, false},
		{"a database without a WAL", map[string]string{"member/snap/db": "bolt"}, true},
		{"a WAL folder that is a file", map[string]string{"member/wal": "x"}, true},
		{"a member folder that is a file", map[string]string{"member": "x"}, true},
		{"folders only (etcd's first steps)", map[string]string{"member/snap/": "", "member/wal.tmp/": ""}, false},
		{"a file system's lost+found", map[string]string{"lost+found/x": "y"}, false},
		{"data moved aside inside", map[string]string{"tnf-moved-20260101T000000.000000000Z/member/snap/db": "bolt"}, false},
		{"a WAL being created", map[string]string{"member/wal.tmp/0.tmp": "x"}, true},
		{"a snapshot without a WAL", map[string]string{"member/snap/0000000000000001-0000000000000002.snap": "x"}, true},
		{"files of something else", map[string]string{"notes.txt": "x"}, true},
	} {
		dir := t.TempDir()
		for path, content := range tc.files {
			p := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if path[len(path)-1] == '/' {
				if err := os.MkdirAll(p, 0o700); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		info, err := Inspect(dir)
		if (err != nil) != tc.err || info.Present {
			t.Errorf("%s: %+v, %v", tc.name, info, err)
		}
	}
}

func TestMoveAsideKeepsNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var moved []string
	for i := 0; i < 5; i++ {
		if err := os.MkdirAll(filepath.Join(dir, "member"), 0o700); err != nil {
			t.Fatal(err)
		}
		to, err := MoveAside(dir, 3, base.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, to)
	}
	left, _ := filepath.Glob(dir + backupInfix + "*")
	if len(left) != 3 {
		t.Fatalf("%d kept, want 3: %v", len(left), left)
	}
	for i, m := range moved {
		_, err := os.Stat(m)
		if kept := err == nil; kept != (i >= 2) {
			t.Errorf("backup %d (%s) kept=%v", i, m, kept)
		}
	}
	if to, err := MoveAside(dir, 3, base); err != nil || to != "" {
		t.Fatalf("moving a missing dir: %q, %v", to, err)
	}
}

// TestMembershipReplay: the membership a WAL ends with, from a snapshot's configuration and the
// configuration changes after it (v1, as etcd 3.5 writes them, and v2).
func TestMembershipReplay(t *testing.T) {
	cc := func(typ raftpb.ConfChangeType, id uint64) raftpb.Entry {
		data, _ := (&raftpb.ConfChange{Type: typ, NodeID: id}).Marshal()
		return raftpb.Entry{Type: raftpb.EntryConfChange, Data: data}
	}
	cc2 := func(typ raftpb.ConfChangeType, id uint64) raftpb.Entry {
		data, _ := (&raftpb.ConfChangeV2{Changes: []raftpb.ConfChangeSingle{{Type: typ, NodeID: id}}}).Marshal()
		return raftpb.Entry{Type: raftpb.EntryConfChangeV2, Data: data}
	}
	normal := raftpb.Entry{Type: raftpb.EntryNormal, Data: []byte("put")}
	rows := []struct {
		name             string
		snapshot         *raftpb.ConfState
		ents             []raftpb.Entry
		removed, learner map[uint64]bool
		other            map[uint64]uint64 // member → the other voter of a two-voter membership
	}{
		{"no configuration at all proves nothing", nil, []raftpb.Entry{normal},
			map[uint64]bool{1: false}, nil, map[uint64]uint64{1: 0}},
		{"bootstrap of two", nil, []raftpb.Entry{cc(raftpb.ConfChangeAddNode, 1), cc(raftpb.ConfChangeAddNode, 2), normal},
			map[uint64]bool{1: false, 2: false, 3: true}, map[uint64]bool{1: false}, map[uint64]uint64{1: 2, 2: 1, 3: 0}},
		{"graceful leave of 2", nil, []raftpb.Entry{cc(raftpb.ConfChangeAddNode, 1), cc(raftpb.ConfChangeAddNode, 2), cc(raftpb.ConfChangeRemoveNode, 2)},
			map[uint64]bool{1: false, 2: true}, nil, map[uint64]uint64{1: 0, 2: 0}},
		{"learner joins after a snapshot, then is promoted", &raftpb.ConfState{Voters: []uint64{1}},
			[]raftpb.Entry{cc(raftpb.ConfChangeAddLearnerNode, 3)}, map[uint64]bool{3: false}, map[uint64]bool{3: true},
			map[uint64]uint64{1: 0, 3: 0}},
		{"promoted", &raftpb.ConfState{Voters: []uint64{1}, Learners: []uint64{3}},
			[]raftpb.Entry{cc2(raftpb.ConfChangeAddNode, 3)}, map[uint64]bool{3: false}, map[uint64]bool{3: false},
			map[uint64]uint64{1: 3, 3: 1}},
		{"removed after the snapshot", &raftpb.ConfState{Voters: []uint64{1, 2}},
			[]raftpb.Entry{cc2(raftpb.ConfChangeRemoveNode, 1)}, map[uint64]bool{1: true, 2: false}, nil, map[uint64]uint64{1: 0, 2: 0}},
		{"three voters", &raftpb.ConfState{Voters: []uint64{1, 2, 3}}, nil, nil, nil, map[uint64]uint64{1: 0, 2: 0}},
	}
	for _, r := range rows {
		var m membership
		if r.snapshot != nil {
			m = fromConfState(*r.snapshot)
		}
		if err := m.replay(r.ents); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		for id, want := range r.removed {
			if got := m.removed(id); got != want {
				t.Errorf("%s: member %d removed=%v, want %v", r.name, id, got, want)
			}
		}
		for id, want := range r.learner {
			if got := m[id]; got != want {
				t.Errorf("%s: member %d learner=%v, want %v", r.name, id, got, want)
			}
		}
		for id, want := range r.other {
			if got := m.otherVoter(id); got != want {
				t.Errorf("%s: member %d's other voter %d, want %d", r.name, id, got, want)
			}
		}
	}
	var m membership
	if err := m.replay([]raftpb.Entry{{Type: raftpb.EntryConfChange, Data: []byte{0xff}}}); err == nil {
		t.Error("a corrupt configuration change was read")
	}
}

// mountTmpfs mounts a new tmpfs on dir until the test ends: a data dir on a disk of its own. It
// needs root, as the node does.
func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Error(err)
		}
	})
}

// TestMountPoint: require_mountpoint refuses an empty folder where a disk did not mount and
// accepts the mounted disk (a fresh file system's lost+found included); moving data aside on a
// mount point moves its entries into a folder inside it, keeps lost+found, and prunes there.
func TestMountPoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := RequireMount(dir); err == nil || !strings.Contains(err.Error(), "not a mount point") {
		t.Fatalf("an unmounted folder: %v", err)
	}
	mountTmpfs(t, dir)
	if err := RequireMount(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lost+found/", "member/snap/db", "member/wal/0.wal"} {
		path := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(path, 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first, err := MoveAside(dir, 1, base)
	if err != nil {
		t.Fatalf("moving a mount point's data aside: %v", err)
	}
	if filepath.Dir(first) != dir {
		t.Fatalf("moved to %s, want a folder inside %s", first, dir)
	}
	if _, err := os.Stat(filepath.Join(first, "member", "wal", "0.wal")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lost+found")); err != nil {
		t.Fatalf("lost+found moved: %v", err)
	}
	if info, err := Inspect(dir); err != nil || info.Present {
		t.Fatalf("after moving aside: %+v, %v", info, err)
	}
	if got, err := MoveAside(dir, 1, base.Add(time.Second)); err != nil || got != "" {
		t.Fatalf("nothing left to move: %q, %v", got, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "member", "snap"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "member", "snap", "db"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := MoveAside(dir, 1, base.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("the older backup was not pruned: %v", err)
	}
	if _, err := os.Stat(filepath.Join(second, "member", "snap", "db")); err != nil {
		t.Fatal(err)
	}
}

// TestVotedForTheOtherVoter: a member whose last hard state holds its vote for the other voter
// of its two-voter membership, in its last entry's term, reads as having voted for its peer;
// a vote for itself, or one in another term, does not.
func TestVotedForTheOtherVoter(t *testing.T) {
	addNode := func(index, id uint64) raftpb.Entry {
		data, _ := (&raftpb.ConfChange{Type: raftpb.ConfChangeAddNode, NodeID: id}).Marshal()
		return raftpb.Entry{Index: index, Term: 3, Type: raftpb.EntryConfChange, Data: data}
	}
	ents := []raftpb.Entry{addNode(1, 1), addNode(2, 2), {Index: 3, Term: 3, Type: raftpb.EntryNormal}}
	for _, r := range []struct {
		name  string
		state raftpb.HardState
		want  bool
	}{
		{"voted for the other voter", raftpb.HardState{Term: 3, Vote: 2, Commit: 2}, true},
		{"voted for itself", raftpb.HardState{Term: 3, Vote: 1, Commit: 2}, false},
		{"voted in a later term", raftpb.HardState{Term: 4, Vote: 2, Commit: 2}, false},
		{"no vote", raftpb.HardState{Term: 3, Commit: 2}, false},
	} {
		dataDir := filepath.Join(t.TempDir(), "etcd")
		saveWAL(t, dataDir, r.state, ents)
		info, err := Inspect(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		if d := info.Data(); d.VotedPeer != r.want || d.OtherVoter != 2 {
			t.Errorf("%s: voted for the peer %v (other voter %x), want %v", r.name, d.VotedPeer, d.OtherVoter, r.want)
		}
	}
}
