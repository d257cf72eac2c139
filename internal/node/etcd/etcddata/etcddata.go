// Package etcddata reads and prepares an etcd data directory while etcd is stopped: which
// cluster and member it belongs to, how far its log goes, whether the member is a learner. It
// uses etcd's own WAL, snapshot and backend readers, so it reads exactly what etcd will read.
package etcddata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/moby/sys/mountinfo"
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/raft/v3/raftpb"
	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/etcd/server/v3/wal"
	"go.etcd.io/etcd/server/v3/wal/walpb"
	"go.uber.org/zap"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
)

// Info is what a data directory holds.
type Info struct {
	Present   bool
	ClusterID uint64
	MemberID  uint64
	Index     uint64 // last raft index in the WAL (or the snapshot's, if later)
	Term      uint64 // raft term of that last entry
	Commit    uint64 // commit index of the last hard state
	Learner   bool
	// Removed: the member is not in the raft membership its WAL ends with (it was removed,
	// e.g. by its own graceful leave).
	Removed bool
	// OtherVoter is the other voter of a membership of exactly two voters, this member and
	// that one, as the WAL ends (0: any other membership).
	OtherVoter uint64
	// ForceBegun: a forced start of this data began (CommitTail) and its member has not served
	// since (ForceServed).
	ForceBegun bool
	// VotedOther: the last hard state holds a vote for OtherVoter in the last entry's term.
	VotedOther bool
}

// Data is the info as the decision reads it. Data whose force began is a voter of no pair: its
// WAL still names both voters, but its commit index may cover entries the peer's member never
// took and may have replaced; started beside that member it could be refused for good.
func (i Info) Data() decision.Data {
	other := i.OtherVoter
	if i.ForceBegun {
		other = 0
	}
	return decision.Data{Known: true, Present: i.Present, ClusterID: i.ClusterID, Index: i.Index, Term: i.Term, Commit: i.Commit,
		Learner: i.Learner, Removed: i.Removed, MemberID: i.MemberID, OtherVoter: other, VotedPeer: other != 0 && i.VotedOther}
}

func walDir(dataDir string) string  { return filepath.Join(dataDir, "member", "wal") }
func snapDir(dataDir string) string { return filepath.Join(dataDir, "member", "snap") }

// backendFile is etcd's backend, the bbolt database its keys are in.
func backendFile(dataDir string) string { return filepath.Join(snapDir(dataDir), "db") }

// Inspect reads a data directory. A missing or empty directory holds no data; one that cannot
// be read, or holds a member's files without the WAL etcd starts from, is an error, never "no
// data": a node that read it as empty could create a new cluster beside the real data.
func Inspect(dataDir string) (Info, error) {
	present, err := hasWAL(dataDir)
	if err != nil || !present {
		return Info{}, err
	}
	r, err := readWAL(dataDir, false)
	if err != nil {
		return Info{}, err
	}
	defer r.w.Close()
	info := r.info
	if info.ForceBegun, err = forceBegun(dataDir); err != nil {
		return Info{}, err
	}
	if !r.roleKnown {
		info.Learner, err = isLearner(dataDir, info.MemberID)
	}
	return info, err
}

// hasWAL says whether dataDir holds a WAL. etcd's wal.Exist reads any error (a disk that fails,
// a WAL path that is a file) as "no WAL"; here only a WAL folder that does not exist, or is
// empty, is no WAL, and then only if the member folder holds no database either.
func hasWAL(dataDir string) (bool, error) {
	entries, err := os.ReadDir(walDir(dataDir))
	switch {
	case err == nil && len(entries) > 0:
		return true, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s: reading the WAL folder: %w", dataDir, err)
	}
	db := backendFile(dataDir)
	switch _, err := os.Stat(db); {
	case err == nil:
		return false, fmt.Errorf("%s exists without a WAL: not data etcd starts from, and not no data (move it away to start empty)", db)
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s: %w", db, err)
	}
	switch file, err := firstFile(dataDir); {
	case err != nil:
		return false, fmt.Errorf("%s: %w", dataDir, err)
	case file != "":
		return false, fmt.Errorf("%s holds %s but no WAL: not data etcd starts from, and not no data (move it away to start empty)", dataDir, file)
	}
	return false, nil
}

// firstFile is the first entry under dir that is not a folder, "" when there is none (a missing
// dir, or folders only: what etcd's first steps leave). It skips a file system's lost+found and
// the data moved aside inside a mount point (MoveAside).
func firstFile(dir string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && path == dir:
			return fs.SkipAll
		case err != nil:
			return err
		case path != dir && filepath.Dir(path) == dir && skippedAtTop(e.Name()):
			return fs.SkipDir
		case !e.IsDir():
			found = path
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}

// RequireMount fails unless dataDir is a mount point (the parameter require_mountpoint): an
// empty folder where a disk did not mount is not "no data".
func RequireMount(dataDir string) error {
	mounted, err := mountinfo.Mounted(dataDir)
	switch {
	case err != nil:
		return fmt.Errorf("%s: telling whether it is a mount point: %w", dataDir, err)
	case !mounted:
		return fmt.Errorf("%s is not a mount point (require_mountpoint is set): its disk did not mount; nothing is read as no data", dataDir)
	}
	return nil
}

type walRead struct {
	w     *wal.WAL
	info  Info
	state raftpb.HardState
	// roleKnown: the WAL's membership names the member, so info.Learner is read from it: the
	// backend's, applied from the WAL, may lag it by etcd's last batch (a crash within 100 ms of
	// a learner's promotion). It counts uncommitted entries too, as replay does; a learner's WAL
	// holds its promotion only once the leader, the only voter then, committed it.
	roleKnown bool
}

// readWAL opens the WAL at the newest usable snapshot, as etcd does at start.
func readWAL(dataDir string, write bool) (walRead, error) {
	lg := zap.NewNop()
	walSnaps, err := wal.ValidSnapshotEntries(lg, walDir(dataDir))
	if err != nil {
		return walRead{}, fmt.Errorf("%s: reading WAL snapshots: %w", dataDir, err)
	}
	var at walpb.Snapshot
	var members membership
	snapshot, err := snap.New(lg, snapDir(dataDir)).LoadNewestAvailable(walSnaps)
	switch {
	case errors.Is(err, snap.ErrNoSnapshot):
	case err != nil:
		return walRead{}, fmt.Errorf("%s: loading snapshot: %w", dataDir, err)
	default:
		at = walpb.Snapshot{Index: snapshot.Metadata.Index, Term: snapshot.Metadata.Term}
		members = fromConfState(snapshot.Metadata.ConfState)
	}
	open := wal.OpenForRead
	if write {
		open = wal.Open
	}
	w, err := open(lg, walDir(dataDir), at)
	if err != nil {
		return walRead{}, fmt.Errorf("%s: opening WAL: %w", dataDir, err)
	}
	metadata, state, ents, err := w.ReadAll()
	if err != nil {
		w.Close()
		return walRead{}, fmt.Errorf("%s: reading WAL: %w", dataDir, err)
	}
	var md etcdserverpb.Metadata
	if err := md.Unmarshal(metadata); err != nil {
		w.Close()
		return walRead{}, fmt.Errorf("%s: WAL metadata: %w", dataDir, err)
	}
	info := Info{Present: true, ClusterID: md.ClusterID, MemberID: md.NodeID, Index: at.Index, Term: at.Term, Commit: state.Commit}
	if n := len(ents); n > 0 && ents[n-1].Index > info.Index {
		info.Index, info.Term = ents[n-1].Index, ents[n-1].Term
	}
	if err := members.replay(ents); err != nil {
		w.Close()
		return walRead{}, fmt.Errorf("%s: %w", dataDir, err)
	}
	info.Removed = members.removed(md.NodeID)
	info.OtherVoter = members.otherVoter(md.NodeID)
	info.VotedOther = info.OtherVoter != 0 && state.Vote == info.OtherVoter && state.Term == info.Term
	var roleKnown bool
	info.Learner, roleKnown = members[md.NodeID]
	return walRead{w: w, info: info, state: state, roleKnown: roleKnown}, nil
}

// membership is the raft configuration: voter and learner IDs.
type membership map[uint64]bool // member ID → learner

func fromConfState(cs raftpb.ConfState) membership {
	m := membership{}
	for _, id := range cs.Voters {
		m[id] = false
	}
	for _, id := range cs.Learners {
		m[id] = true
	}
	return m
}

// replay applies the configuration changes in ents, as raft does when etcd replays its WAL.
// Every entry counts, committed or not, as CommitTail makes them all committed before a forced
// cluster. etcd turns a change it rejects at apply time into a no-op without rewriting the
// entry; the only ones it rejects name a member that is already gone or already added, which
// changes nothing here either.
func (m *membership) replay(ents []raftpb.Entry) error {
	for _, e := range ents {
		var changes []raftpb.ConfChangeSingle
		switch e.Type {
		case raftpb.EntryConfChange:
			var cc raftpb.ConfChange
			if err := cc.Unmarshal(e.Data); err != nil {
				return fmt.Errorf("configuration change at index %d: %w", e.Index, err)
			}
			changes = []raftpb.ConfChangeSingle{{Type: cc.Type, NodeID: cc.NodeID}}
		case raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeV2
			if err := cc.Unmarshal(e.Data); err != nil {
				return fmt.Errorf("configuration change at index %d: %w", e.Index, err)
			}
			changes = cc.Changes
		default:
			continue
		}
		if *m == nil {
			*m = membership{}
		}
		for _, c := range changes {
			switch c.Type {
			case raftpb.ConfChangeAddNode:
				(*m)[c.NodeID] = false
			case raftpb.ConfChangeAddLearnerNode:
				(*m)[c.NodeID] = true
			case raftpb.ConfChangeRemoveNode:
				delete(*m, c.NodeID)
			}
		}
	}
	return nil
}

// removed says the member is not in a known membership. A WAL that holds no configuration at
// all (none read) proves nothing.
func (m membership) removed(id uint64) bool {
	if len(m) == 0 {
		return false
	}
	_, ok := m[id]
	return !ok
}

// otherVoter is the other voter of a membership of exactly two voters, id and that one; 0 for
// any other membership.
func (m membership) otherVoter(id uint64) uint64 {
	if learner, ok := m[id]; len(m) != 2 || !ok || learner {
		return 0
	}
	for other, learner := range m {
		if other != id && !learner {
			return other
		}
	}
	return 0
}

// isLearner reads the member's entry in the backend's membership bucket (a WAL that holds no
// configuration names no role).
func isLearner(dataDir string, memberID uint64) (bool, error) {
	path := backendFile(dataDir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return false, fmt.Errorf("%s: opening backend (is etcd still running?): %w", path, err)
	}
	defer db.Close()
	var learner bool
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("members"))
		if b == nil {
			return nil
		}
		v := b.Get([]byte(strconv.FormatUint(memberID, 16)))
		if v == nil {
			return nil
		}
		var m struct {
			IsLearner bool `json:"isLearner"`
		}
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("%s: member %x: %w", path, memberID, err)
		}
		learner = m.IsLearner
		return nil
	})
	return learner, err
}

// CommitTail marks every entry in the WAL as committed, so that a following
// --force-new-cluster keeps them. etcd discards entries beyond the last commit index it saw when
// it forces a new cluster; in a two-voter cluster an entry in this node's WAL may already have
// been committed and acknowledged by the peer, which is now gone. Keeping them loses no
// acknowledged write and keeps revisions from going backwards. Entries that were never committed
// were never acknowledged, so committing them is safe too. It returns the index now committed.
//
// A last record cut short (a write the crash interrupted: never synced, so never acknowledged nor
// counted for a commit) is cut off first, as etcd does at its own start with wal.Repair, which
// keeps the file as it was beside it (*.wal.broken); torn says so. Reading the WAL for writing
// fails on it, where reading it for the decision (Inspect) stops before it: without the repair
// a node whose data is the newest could never force.
//
// It marks the force begun first (Info.ForceBegun), for a node whose force is interrupted before
// etcd writes the peer's removal; ForceServed takes the mark away.
func CommitTail(dataDir string) (committed uint64, torn bool, err error) {
	if err := markForce(dataDir); err != nil {
		return 0, false, err
	}
	r, err := readWAL(dataDir, true)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if !wal.Repair(zap.NewNop(), walDir(dataDir)) {
			return 0, true, fmt.Errorf("%s: the WAL's last record is cut short and etcd's repair of it failed: %w", dataDir, err)
		}
		torn = true
		r, err = readWAL(dataDir, true)
	}
	if err != nil {
		return 0, torn, err
	}
	st := r.state
	if r.info.Index > st.Commit {
		st.Commit = r.info.Index
		if err := r.w.Save(st, nil); err != nil {
			r.w.Close()
			return 0, torn, fmt.Errorf("%s: saving hard state: %w", dataDir, err)
		}
	}
	// Close syncs the tail.
	if err := r.w.Close(); err != nil {
		return 0, torn, fmt.Errorf("%s: closing WAL: %w", dataDir, err)
	}
	return st.Commit, torn, nil
}
