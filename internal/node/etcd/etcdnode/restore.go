package etcdnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// PropRestore (a cluster-wide option in the CIB) is where a restore from a snapshot stands
// (tnfctl restore): a Restore as JSON, from its first step until both nodes serve the restored
// cluster. Both nodes read it (tnfctl status, setup: a restore's etcd is out of Pacemaker's
// hands, which a configuration applied meanwhile would undo), and the restore run again resumes
// from it.
const PropRestore = "tnf-etcd-restore"

// The steps of a restore, in order. Each is where the restore stands until it is done.
const (
	RestoreStopping  = "stopping"  // etcd taken out of Pacemaker's hands on both nodes (target-role Stopped)
	RestoreRestoring = "restoring" // the snapshot restored as a new cluster of one on the restoring node
	RestoreStarting  = "starting"  // etcd back in Pacemaker's hands: the restored cluster serves, the peer joins it
	// RestoreHandover: the handover's conditions set again in the Etcd object of a snapshot from
	// before the handover (ReassertHandover), once the API answers. Only such a restore has it.
	RestoreHandover = "handover"
	// RestoreDone: the restore ended. Its record stays, so that the same restore run again does
	// nothing, and the next one knows where this one's revisions began.
	RestoreDone = "done"
)

// RestoreSteps are the steps of every restore in their order; RestoreHandover follows them in
// one that re-asserts the handover.
var RestoreSteps = []string{RestoreStopping, RestoreRestoring, RestoreStarting}

// Steps are r's steps in their order.
func (r Restore) Steps() []string {
	if !r.ReassertHandover {
		return RestoreSteps
	}
	return append(slices.Clone(RestoreSteps), RestoreHandover)
}

// Restore is a restore from a snapshot under way.
type Restore struct {
	Node     string `json:"node"`     // where tnfctl restore runs, and the restored cluster's first member
	Snapshot string `json:"snapshot"` // the snapshot's SHA-256: a restore resumes only from the same file
	Revision int64  `json:"revision"` // the snapshot's revision
	// Bump is how far the restore raises the snapshot's revision (etcddata.RestoreSnapshot in the full agent).
	Bump uint64 `json:"bump"`
	// Token is the restored cluster's initial cluster token; Cluster the ID it gives (hex).
	Token   string `json:"token"`
	Cluster string `json:"cluster"`
	// GaveUp is the served cluster (PropServed) the restore replaces, in hex ("" none recorded).
	GaveUp string    `json:"gaveUp,omitempty"`
	Step   string    `json:"step"`
	Began  time.Time `json:"began"`
	Since  time.Time `json:"since"` // when the step began
	// Waiting says what the step waits for, when it has had to wait.
	Waiting string `json:"waiting,omitempty"`
	// ReassertHandover: the snapshot is from before the handover, accepted as such by the
	// administrator; the restore's last step sets the handover's conditions again.
	ReassertHandover bool `json:"reassertHandover,omitempty"`
}

// UnderWay says the restore has not ended.
func (r Restore) UnderWay() bool { return r.Step != RestoreDone }

// Holding says why the restore holds etcd stopped on both nodes ("" once it gave etcd back):
// from its first step until its last, in which it starts etcd again.
func (r Restore) Holding() string {
	if r.Step != RestoreStopping && r.Step != RestoreRestoring {
		return ""
	}
	return fmt.Sprintf("tnfctl restore on %s holds etcd stopped (step %s) while it replaces the data with a snapshot's: "+
		"etcd starts again once the restore gives it back", r.Node, r.Step)
}

// SnapshotID is the snapshot's SHA-256 as the restore's lines name it.
func (r Restore) SnapshotID() string { return ShortSum(r.Snapshot) }

// ShortSum is a snapshot's SHA-256 (hex) cut to 12 digits, as the lines that name it give it.
// It lives here, not in etcddata, because the OCF entry point links this package and must not
// link etcd's storage packages (agents/ocf-etcd's TestEntryPointStaysLean).
func ShortSum(sha string) string { return sha[:min(12, len(sha))] }

// FirstRevision is the revision the restored cluster's keyspace continues from.
func (r Restore) FirstRevision() uint64 { return uint64(max(r.Revision, 0)) + r.Bump }

// ErrUnreadableRestore is a PropRestore value this layer cannot read.
var ErrUnreadableRestore = errors.New("unreadable")

// ParseRestore reads PropRestore's value.
func ParseRestore(v string) (Restore, error) {
	var r Restore
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return r, fmt.Errorf("cluster option %s is %w: %w", PropRestore, ErrUnreadableRestore, err)
	}
	if r.Node == "" || r.Snapshot == "" || r.Cluster == "" {
		return r, fmt.Errorf("cluster option %s is %w: %q names no node, snapshot or cluster", PropRestore, ErrUnreadableRestore, v)
	}
	return r, nil
}

// ReadRestore reads the restore under way; ok is false when none is.
func ReadRestore(ctx context.Context, store attrs.Store) (r Restore, ok bool, err error) {
	v, ok, err := store.Property(ctx, PropRestore)
	if err != nil || !ok || v == "" {
		return r, false, err
	}
	r, err = ParseRestore(v)
	return r, err == nil, err
}

// WriteRestore records where the restore stands.
func WriteRestore(ctx context.Context, store attrs.Store, r Restore) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return store.SetProperty(ctx, PropRestore, string(data))
}

// EndRestore deletes the record: the restore is done.
func EndRestore(ctx context.Context, store attrs.Store) error {
	return store.SetProperty(ctx, PropRestore, "")
}
