package unblock

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Loss is what leading from this node's older etcd data gives up: the peer's data as it last
// published it.
type Loss struct {
	Self, Peer string
	DataDir    string
	Local      etcddata.Info
	PeerData   decision.Data
}

// ErrNothingToGiveUp is the refusal when the local data is not behind the peer's record.
var ErrNothingToGiveUp = errors.New("nothing to give up")

// ErrNoLocalData is the refusal when this node has no etcd data to lead from.
var ErrNoLocalData = errors.New("no etcd data to lead from")

// ErrUnreadablePeer: the peer's agent publishes a contract this agent cannot read, so what its
// data is cannot be told, nor given up.
var ErrUnreadablePeer = errors.New("the peer's records cannot be read by this layer")

// AssessLoss reads what accepting the loss would give up, and refuses (Refusal) when it must.
func AssessLoss(ctx context.Context, tools pcmk.Tools, store attrs.Store, cfg etcdnode.Config) (Loss, error) {
	l := Loss{Self: cfg.Self, Peer: cfg.Peer, DataDir: cfg.DataDir}
	m, err := tools.Members(ctx)
	if err != nil {
		return l, fmt.Errorf("reading the Corosync membership: %w", err)
	}
	if m.Nodes[cfg.Peer] {
		return l, l.Refusal(true)
	}
	if l.PeerData, err = peerRecord(ctx, store, cfg.Peer); err != nil {
		return l, err
	}
	if l.Local, err = etcddata.Inspect(cfg.DataDir); err != nil {
		// etcd holds its data open while it runs, and it runs only once it serves or joins.
		return l, fmt.Errorf("reading %s (is etcd running here? then nothing waits to be given up): %w", cfg.DataDir, err)
	}
	return l, l.Refusal(false)
}

// peerRecord reads the peer's data record, only in a format this layer knows: a given-up record
// written from a misread one could later cover data the administrator never saw.
func peerRecord(ctx context.Context, store attrs.Store, peer string) (decision.Data, error) {
	n, err := etcdnode.ReadContract(ctx, store, peer)
	if err != nil {
		return decision.Data{}, err
	}
	if !contract.Readable(n) {
		return decision.Data{}, fmt.Errorf("%s: %w", contract.Unreadable(peer, n), ErrUnreadablePeer)
	}
	return etcdnode.ReadRecord(ctx, store, peer)
}

// Refusal says why the loss must not be accepted: the peer is a live Corosync member (it serves
// or will serve the newest data), it published no data, there is no local data to lead from, or
// the local data is not behind the peer's record.
func (l Loss) Refusal(peerMember bool) error {
	switch {
	case peerMember:
		return fmt.Errorf("%s: %w", l.Peer, ErrPeerMember)
	case !l.PeerData.Present:
		return fmt.Errorf("%s published no etcd data: %w", l.Peer, ErrNothingToGiveUp)
	case !l.Local.Present:
		return fmt.Errorf("%s: %w", l.DataDir, ErrNoLocalData)
	case !l.Local.Learner && !l.Local.Removed && l.Local.ClusterID == l.PeerData.ClusterID && decision.Compare(l.Local.Data(), l.PeerData) >= 0:
		return fmt.Errorf("the local data (index %d) is not behind %s's (index %d): %w; tnfctl status says why etcd waits",
			l.Local.Index, l.Peer, l.PeerData.Index, ErrNothingToGiveUp)
	}
	return nil
}

// Describe names the writes given up, for the administrator who must confirm.
func (l Loss) Describe(w io.Writer) {
	state := ""
	switch {
	case l.Local.Removed:
		state = ", a member that left its cluster in a graceful stop"
	case l.Local.Learner:
		state = ", a learner that may not have caught up"
	}
	fmt.Fprintf(w, "%s's etcd data: cluster %x, raft index %d%s\n", l.Self, l.Local.ClusterID, l.Local.Index, state)
	fmt.Fprintf(w, "%s last published: cluster %x, raft index %d\n", l.Peer, l.PeerData.ClusterID, l.PeerData.Index)
	// A record is as new as the peer's last monitor (every 5 s): the peer may have written after it.
	switch {
	case l.Local.ClusterID != l.PeerData.ClusterID:
		fmt.Fprintf(w, "Leading from %s's data gives up all of %s's data.\n", l.Self, l.Peer)
	case l.PeerData.Index > l.Local.Index:
		fmt.Fprintf(w, "Leading from %s's data gives up what %s accepted after raft index %d: %d entries by its last record, "+
			"and whatever it wrote after publishing it.\n", l.Self, l.Peer, l.Local.Index, l.PeerData.Index-l.Local.Index)
	default:
		fmt.Fprintf(w, "%s's last record is not beyond raft index %d, but it may have written after publishing it: "+
			"leading from %s's data gives up whatever %s accepted after raft index %d.\n", l.Peer, l.Local.Index, l.Self, l.Peer, l.Local.Index)
	}
	fmt.Fprintf(w, "%s's data is restored as a new etcd cluster (revisions raised by %d); %s's data is moved aside when it joins again.\n",
		l.Self, etcddata.RevisionBump, l.Peer)
}

// Accept records the peer's data as given up; the agent reads it at its next decision.
func (l Loss) Accept(ctx context.Context, store attrs.Store) error {
	return store.Set(ctx, l.Self, etcdnode.AttrGivenUp, etcdnode.Record(l.PeerData), attrs.Forever)
}
