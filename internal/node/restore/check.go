// Package restore is `tnfctl restore SNAPSHOT`: the cluster's etcd data replaced by a snapshot
// on a cluster whose etcd Pacemaker runs through the layer's agent (own mode). It checks the
// snapshot before anything stops, takes etcd out of Pacemaker's hands on both nodes (a ban on
// the peer, then target-role Stopped: stops like any planned one, no fencing, no failover),
// restores the snapshot as a new etcd cluster of one on this node (both nodes' old data moved
// aside and kept, revisions raised and marked compacted), records the new cluster as the served
// one, and gives etcd back to Pacemaker: this node leads the restored cluster and the peer's
// agent moves its data aside and joins it as a learner, by the agent's own rules (the old
// cluster given up, as accept-data-loss gives data up). Where it stands is a cluster option (etcdnode.PropRestore):
// both nodes' status shows it, and the restore run again resumes from it after a crash or a
// reboot at any step.
package restore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
)

// Handover is what a snapshot's copy of the cluster-etcd-operator's Etcd object says of the
// handover from the installer's etcd.
type Handover int

const (
	// NoEtcdObject: the snapshot holds no Etcd object (no cluster-etcd-operator ran).
	NoEtcdObject Handover = iota
	// HandoverCompleted: its ExternalEtcdHasCompletedTransition condition is True.
	HandoverCompleted
	// HandoverNotCompleted: it is not: the operator that reads it back runs its etcd container in
	// the static pod again, beside Pacemaker's etcd.
	HandoverNotCompleted
)

// Facts is what the restore is checked against before anything stops.
type Facts struct {
	Self, Peer string
	// Nodes are the cluster's nodes by name, with their addresses (cluster.yaml).
	Nodes    map[string]string
	Snapshot etcddata.Snapshot
	// Guest says why this node is a guest of the operator's configuration ("" when it is not).
	Guest string
	// Installer says why the installer's etcd may run here ("" when it does not).
	Installer string
	// Recorded is the restore the CIB records, under way or done (nil: none).
	Recorded *etcdnode.Restore
	// RecordedNodeMember: the node the recorded restore runs on is a Corosync member.
	RecordedNodeMember bool
	// Layer and PeerLayer are the layer versions of this node's tnfctl and of the peer's agent as
	// it published it at its start ("": not known, the peer is down): an agent of another release
	// may not know the restore's record, and its setup would start etcd in the middle.
	Layer, PeerLayer string
	// EtcdVersion and PeerEtcdVersion are the versions of the etcd each node runs, as each agent
	// published it ("": not known): etcd allows no downgrade, so the peer must not run an older
	// minor version than the etcd that serves the restored cluster.
	EtcdVersion, PeerEtcdVersion string
	// NotManaged says why Pacemaker would not stop etcd when asked (its maintenance mode, etcd
	// unmanaged; "" when it would).
	NotManaged string
	// SnapshotInDataDir: the snapshot is a file of this node's data dir, which the restore moves
	// aside: a restore interrupted after that could not read it again.
	SnapshotInDataDir bool
	// LiveIdentity and SnapshotIdentity are the cluster's identity (its kube-system namespace's
	// UID) in the etcd that serves now and in the snapshot ("": not read, or not there).
	LiveIdentity, SnapshotIdentity string
	// HandedOver: this node's handover from the installer's etcd completed.
	HandedOver bool
	// SnapshotHandover is what the snapshot's Etcd object says of the handover.
	SnapshotHandover Handover
	// BeforeHandover: the administrator accepts a snapshot from before the handover (its
	// conditions are then set again: ReassertsHandover).
	BeforeHandover bool
	// Again: the administrator restores once more from the snapshot last restored.
	Again bool
}

// Plan is what the restore does.
type Plan int

const (
	// Begin a new restore.
	Begin Plan = iota
	// Resume the restore under way, from its step.
	Resume
	// Nothing: the cluster was restored from this snapshot already.
	Nothing
)

var planNames = []string{"begin", "resume", "nothing"}

func (p Plan) String() string { return planNames[p] }

// The refusals a caller may tell apart.
var (
	ErrGuest          = errors.New("a guest of the cluster-etcd-operator's configuration")
	ErrUnderWay       = errors.New("another restore is under way")
	ErrInstaller      = errors.New("the installer's etcd may run here")
	ErrOtherRelease   = errors.New("the peer runs another release of the layer")
	ErrOtherCluster   = errors.New("a snapshot of another cluster")
	ErrBeforeHandover = errors.New("a snapshot from before the handover")
	ErrNotManaged     = errors.New("etcd is not in Pacemaker's hands")
	ErrSnapshotPlace  = errors.New("the snapshot is in the data dir the restore moves")
	ErrNothingToAbort = errors.New("no restore to abort")
)

// Check says what the restore does, or why it must not run at all. It is pure: the facts are
// read by the caller.
func Check(f Facts) (Plan, error) {
	if f.Guest != "" {
		return 0, fmt.Errorf("this node is a guest (%s): its etcd is the cluster-etcd-operator's, restored with the script the operator "+
			"publishes on the nodes (cluster-restore.sh, the two-node cluster-restore-tnf.sh): %w", f.Guest, ErrGuest)
	}
	if r := f.Recorded; r != nil {
		switch {
		case r.UnderWay() && r.Node != f.Self && f.RecordedNodeMember:
			return 0, fmt.Errorf("tnfctl restore runs on %s (step %s since %s): finish it there: %w", r.Node, r.Step, stamp(r.Since), ErrUnderWay)
		case r.UnderWay() && r.Node == f.Self && r.Snapshot != f.Snapshot.SHA256:
			return 0, fmt.Errorf("a restore from another snapshot (SHA-256 %s) is under way here (step %s): run tnfctl restore with that "+
				"file to finish it: %w", r.SnapshotID(), r.Step, ErrUnderWay)
		case r.UnderWay() && r.Node == f.Self && f.NotManaged != "":
			return 0, fmt.Errorf("%s: Pacemaker would not carry out the restore's step %s; undo it first: %w", f.NotManaged, r.Step, ErrNotManaged)
		case r.UnderWay() && r.Node == f.Self:
			return Resume, nil
		case !r.UnderWay() && r.Snapshot == f.Snapshot.SHA256 && !f.Again:
			return Nothing, nil
		}
		// A restore ended, of another snapshot or to be done again; or one begun on a node that
		// is gone from the membership, which never finishes it: this one takes its place.
	}
	if f.Installer != "" {
		return 0, fmt.Errorf("%s: this node's etcd is not Pacemaker's yet (restore it with OpenShift's own procedure, or finish the "+
			"handover first): %w", f.Installer, ErrInstaller)
	}
	if f.PeerLayer != "" && f.PeerLayer != f.Layer {
		return 0, fmt.Errorf("%s runs layer %s, this node %s: finish the update of the layer on both nodes first: %w",
			f.Peer, f.PeerLayer, f.Layer, ErrOtherRelease)
	}
	if decision.OlderMinor(f.PeerEtcdVersion, f.EtcdVersion) {
		return 0, fmt.Errorf("%s runs etcd %s, this node %s, and etcd allows no downgrade: %s could not join the cluster restored here; "+
			"run the restore on %s: %w", f.Peer, f.PeerEtcdVersion, f.EtcdVersion, f.Peer, f.Peer, ErrOtherRelease)
	}
	if f.NotManaged != "" {
		return 0, fmt.Errorf("%s: Pacemaker would not stop etcd for the restore; undo it first: %w", f.NotManaged, ErrNotManaged)
	}
	if f.SnapshotInDataDir {
		return 0, fmt.Errorf("%s is in the data dir, which the restore moves aside: copy it elsewhere first: %w", f.Snapshot.Path, ErrSnapshotPlace)
	}
	if !f.membersAreNodes() {
		return 0, fmt.Errorf("the snapshot's etcd members (%s) are none of this cluster's nodes (%s): %w",
			describeMembers(f.Snapshot.Members), describeNodes(f.Nodes), ErrOtherCluster)
	}
	if f.LiveIdentity != "" && f.SnapshotIdentity != "" && f.LiveIdentity != f.SnapshotIdentity {
		return 0, fmt.Errorf("the snapshot's kube-system namespace is %s, this cluster's %s: %w", f.SnapshotIdentity, f.LiveIdentity, ErrOtherCluster)
	}
	if f.ReassertsHandover() && !f.BeforeHandover {
		return 0, fmt.Errorf("the snapshot's Etcd object (etcds.operator.openshift.io cluster) does not record the handover as completed "+
			"(ExternalEtcdHasCompletedTransition): restored as it is, the cluster-etcd-operator would run its etcd container in the "+
			"static pod again beside Pacemaker's etcd; restore a snapshot taken after the handover, or pass --before-handover: the "+
			"restore then sets the handover's conditions again once the API answers (with --kubeconfig's credential), and the "+
			"static pod guard moves out an etcd the operator renders meanwhile: %w", ErrBeforeHandover)
	}
	return Begin, nil
}

// ReassertsHandover says a restore of the snapshot must set the handover's conditions again:
// the handover completed here, and the snapshot's Etcd object does not record it.
func (f Facts) ReassertsHandover() bool {
	return f.HandedOver && f.SnapshotHandover == HandoverNotCompleted
}

// CheckAbort says why the recorded restore (nil: none) must not be aborted from self, where
// nodeMember says its node is a Corosync member ("" nil: it may). Only while it stops etcd, before
// any data is replaced; and only on its node, where no run of it goes on meanwhile (the lock), or
// once that node has left: a run on the other node would set target-role Stopped again after the
// abort had removed it.
func CheckAbort(rec *etcdnode.Restore, self string, nodeMember bool) error {
	switch {
	case rec == nil || !rec.UnderWay():
		return fmt.Errorf("no restore is under way: %w", ErrNothingToAbort)
	case rec.Step != etcdnode.RestoreStopping:
		return fmt.Errorf("the restore on %s is at step %s: its data may be replaced already; finish it with tnfctl restore and the same snapshot: %w",
			rec.Node, rec.Step, ErrUnderWay)
	case rec.Node != self && nodeMember:
		return fmt.Errorf("tnfctl restore runs on %s: abort it there: %w", rec.Node, ErrUnderWay)
	}
	return nil
}

// membersAreNodes says a member of the snapshot's cluster is one of this cluster's nodes: its
// name and the address of its peer URL are that node's.
func (f Facts) membersAreNodes() bool {
	return slices.ContainsFunc(f.Snapshot.Members, func(m etcddata.SnapshotMember) bool {
		ip, ok := f.Nodes[m.Name]
		return ok && slices.ContainsFunc(m.PeerURLs, func(u string) bool { return urlHost(u) == ip })
	})
}

// urlHost is the host of a URL, without brackets ("" when it is none).
func urlHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	host, _, err := net.SplitHostPort(p.Host)
	if err != nil {
		return strings.Trim(p.Host, "[]")
	}
	return host
}

func describeMembers(ms []etcddata.SnapshotMember) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%s at %s", m.Name, strings.Join(m.PeerURLs, ",")))
	}
	return strings.Join(s, "; ")
}

func describeNodes(nodes map[string]string) string {
	var s []string
	for name, ip := range nodes {
		s = append(s, name+" at "+ip)
	}
	slices.Sort(s)
	return strings.Join(s, "; ")
}

// Bump is how far the restore raises the snapshot's revision: etcd's recovery guide's
// etcddata.RevisionBump beyond highest, the highest revision or raft index this cluster is known
// to have reached (the etcd that serves, or its data, the nodes' records, an earlier restore's
// start): the restored revisions then start beyond every revision a client has seen, whatever
// the snapshot's age.
func Bump(highest uint64) uint64 { return etcddata.RevisionBump + highest }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
