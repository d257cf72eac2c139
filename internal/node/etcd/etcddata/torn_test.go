package etcddata

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/raft/v3/raftpb"
	"go.etcd.io/etcd/server/v3/wal"
	"go.uber.org/zap"

	"github.com/tnf-layer/tnf-layer/internal/testutil/walfault"
)

// TestCommitTailRepairsATornRecord: a crash that cut the WAL's last record short (its frame
// announces more bytes than the file holds, as a write interrupted by a power cut leaves it)
// is read by Inspect up to the last whole entry, and CommitTail cuts the torn record off, as
// etcd does at start, keeps the file as it was beside it and commits every whole entry; a
// second CommitTail finds nothing to repair.
func TestCommitTailRepairsATornRecord(t *testing.T) {
	dataDir := t.TempDir()
	const last = 5
	writeWAL(t, dataDir, last)
	if err := walfault.TearLast(walDir(dataDir)); err != nil {
		t.Fatal(err)
	}

	info, err := Inspect(dataDir)
	if err != nil || info.Index != last {
		t.Fatalf("Inspect of a torn WAL: index %d (%v), want %d", info.Index, err, last)
	}
	committed, torn, err := CommitTail(dataDir)
	if err != nil || !torn || committed != last {
		t.Fatalf("CommitTail of a torn WAL: committed %d, torn %v (%v); want %d, torn", committed, torn, err, last)
	}
	if broken, _ := filepath.Glob(filepath.Join(walDir(dataDir), "*.wal.broken")); len(broken) != 1 {
		t.Errorf("the torn file was not kept beside the WAL: %v", broken)
	}
	committed, torn, err = CommitTail(dataDir)
	if err != nil || torn || committed != last {
		t.Fatalf("CommitTail after the repair: committed %d, torn %v (%v); want %d, not torn", committed, torn, err, last)
	}
}

// writeWAL writes a WAL as etcd's own writer does: entries 1 to last of 1 KiB, committed up to 2.
func writeWAL(t *testing.T, dataDir string, last uint64) {
	t.Helper()
	var ents []raftpb.Entry
	for i := uint64(1); i <= last; i++ {
		ents = append(ents, raftpb.Entry{Index: i, Term: 1, Type: raftpb.EntryNormal, Data: bytes.Repeat([]byte{'v'}, 1024)})
	}
	saveWAL(t, dataDir, raftpb.HardState{Term: 1, Commit: 2}, ents)
}

// saveWAL writes a new WAL of member 1 of cluster c0ffee with etcd's own writer: state, then ents.
func saveWAL(t *testing.T, dataDir string, state raftpb.HardState, ents []raftpb.Entry) {
	t.Helper()
	md, err := (&etcdserverpb.Metadata{NodeID: 0x1, ClusterID: 0xc0ffee}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(snapDir(dataDir), 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := wal.Create(zap.NewNop(), walDir(dataDir), md)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Save(state, ents); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCommitTailMarksTheForce: CommitTail marks the data's force begun before it changes the
// WAL, so data whose force was cut short is the voter of no pair; ForceServed takes the mark
// away (twice is no error), and data moved aside takes its mark with it.
func TestCommitTailMarksTheForce(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "etcd")
	writeWAL(t, dataDir, 5)
	begun := func(want bool) {
		t.Helper()
		info, err := Inspect(dataDir)
		if err != nil || info.ForceBegun != want {
			t.Fatalf("Inspect: force begun %v (%v), want %v", info.ForceBegun, err, want)
		}
	}
	begun(false)
	if _, _, err := CommitTail(dataDir); err != nil {
		t.Fatal(err)
	}
	begun(true)
	if got := (Info{MemberID: 1, OtherVoter: 2, ForceBegun: true}).Data().OtherVoter; got != 0 {
		t.Errorf("data whose force began is the voter of a pair with %x", got)
	}
	for range 2 {
		if err := ForceServed(dataDir); err != nil {
			t.Fatal(err)
		}
		begun(false)
	}

	if _, _, err := CommitTail(dataDir); err != nil {
		t.Fatal(err)
	}
	moved, err := MoveAside(dataDir, 1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(moved, forceMark)); err != nil {
		t.Errorf("the mark did not move aside with its data: %v", err)
	}
}
