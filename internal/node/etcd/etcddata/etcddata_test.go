package etcddata

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/raft/v3/raftpb"
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
	}{
		{"no configuration at all proves nothing", nil, []raftpb.Entry{normal},
			map[uint64]bool{1: false}, nil},
		{"bootstrap of two", nil, []raftpb.Entry{cc(raftpb.ConfChangeAddNode, 1), cc(raftpb.ConfChangeAddNode, 2), normal},
			map[uint64]bool{1: false, 2: false, 3: true}, map[uint64]bool{1: false}},
		{"graceful leave of 2", nil, []raftpb.Entry{cc(raftpb.ConfChangeAddNode, 1), cc(raftpb.ConfChangeAddNode, 2), cc(raftpb.ConfChangeRemoveNode, 2)},
			map[uint64]bool{1: false, 2: true}, nil},
		{"learner joins after a snapshot, then is promoted", &raftpb.ConfState{Voters: []uint64{1}},
			[]raftpb.Entry{cc(raftpb.ConfChangeAddLearnerNode, 3)}, map[uint64]bool{3: false}, map[uint64]bool{3: true}},
		{"promoted", &raftpb.ConfState{Voters: []uint64{1}, Learners: []uint64{3}},
			[]raftpb.Entry{cc2(raftpb.ConfChangeAddNode, 3)}, map[uint64]bool{3: false}, map[uint64]bool{3: false}},
		{"removed after the snapshot", &raftpb.ConfState{Voters: []uint64{1, 2}},
			[]raftpb.Entry{cc2(raftpb.ConfChangeRemoveNode, 1)}, map[uint64]bool{1: true, 2: false}, nil},
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
	}
	var m membership
	if err := m.replay([]raftpb.Entry{{Type: raftpb.EntryConfChange, Data: []byte{0xff}}}); err == nil {
		t.Error("a corrupt configuration change was read")
	}
}
