// Package outofservice puts Kubernetes' out-of-service taint
// (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, the non-graceful node shutdown) on
// the peer's Node once Pacemaker has fenced it, and takes it off once the peer is back. Without
// the taint, pods with volumes attached to a machine that is off wait for ever; with it, they
// are deleted and their volumes detached at once, so they start on the survivor. The taint is
// only safe on a machine that is really off, so it follows a fencing that succeeded, never a
// suspicion. The decision is a pure function; reconcile.go reads the cluster and the API.
package outofservice

import (
	"fmt"
	"time"
)

// Observation is what one pass sees of the peer.
type Observation struct {
	Now time.Time
	// PeerOnline: the peer is an online member of this node's Pacemaker cluster.
	PeerOnline bool
	// LastFenced is when the latest fencing of the peer that succeeded completed, from
	// Pacemaker's fencing history (an administrator's confirm-peer-down is one); zero: none.
	LastFenced time.Time
	// LastSeenOnline is when this node last saw the peer online (kept on disk across passes
	// and restarts); zero: never.
	LastSeenOnline time.Time
	Node           NodeState
}

// NodeState is the peer's Node object.
type NodeState struct {
	Found bool
	// Tainted: it carries the out-of-service taint, whoever put it there; Ours: with this
	// layer's annotation (only those are taken off here).
	Tainted, Ours bool
	// Ready is its kubelet's Ready condition, true since ReadySince.
	Ready      bool
	ReadySince time.Time
	// Attachments are the VolumeAttachments still naming the node (read only when the taint
	// may come off).
	Attachments int
}

// Action is what a pass does to the peer's Node.
type Action string

const (
	Keep   Action = "keep"
	Add    Action = "add"
	Remove Action = "remove"
)

// DetachWait bounds how long a peer that is back and Ready keeps the taint while volume
// attachments still name it: the taint makes Kubernetes detach them at once, so one that
// stays is stuck, and the node must not stay unusable for it.
const DetachWait = 5 * time.Minute

// Decide says what to do to the peer's Node, and why.
func Decide(o Observation) (Action, string) {
	switch {
	case !o.Node.Found:
		return Keep, "the peer has no Node object"
	case !o.PeerOnline && o.LastFenced.IsZero():
		return Keep, "the peer is not in the cluster and was never fenced: no taint on a suspicion"
	case !o.PeerOnline && !o.LastFenced.After(o.LastSeenOnline):
		return Keep, fmt.Sprintf("the peer left the cluster (last seen %s) after its last fencing (%s): it has not been fenced since",
			stamp(o.LastSeenOnline), stamp(o.LastFenced))
	case !o.PeerOnline && o.Node.Tainted:
		return Keep, "the peer is fenced and already tainted"
	case !o.PeerOnline:
		return Add, fmt.Sprintf("the peer was fenced at %s and has not been back since", stamp(o.LastFenced))
	case !o.Node.Ours:
		return Keep, "the peer is in the cluster and carries no taint of ours"
	case !o.Node.Ready:
		return Keep, "the peer is back in the cluster; its kubelet is not Ready yet"
	case o.Node.Attachments > 0 && o.Now.Sub(o.Node.ReadySince) < DetachWait:
		return Keep, fmt.Sprintf("the peer is back and Ready; %d volume attachments still name it (waiting up to %v from Ready)",
			o.Node.Attachments, DetachWait)
	case o.Node.Attachments > 0:
		return Remove, fmt.Sprintf("the peer is back and Ready for %v; %d volume attachments still name it, taken off anyway",
			DetachWait, o.Node.Attachments)
	}
	return Remove, "the peer is back, Ready, and no volume attachment names it"
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
