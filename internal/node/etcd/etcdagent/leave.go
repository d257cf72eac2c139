package etcdagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
)

// leaveKey holds the leave claim: the member ID (hex) of the member that leaves gracefully. It
// lives in etcd itself because taking it is a linearizable compare-and-swap that needs both
// voters, which leaving needs anyway; and a holder that is no longer a member is stale by
// construction (a member that returns joins with a new ID), so the claim is never released.
const leaveKey = "tnf-layer/graceful-leave"

// Bounds of a graceful leave inside a stop: at most maxLeave, and never so long that the stop
// itself (stopGrace, then the ports) could miss its own deadline.
const (
	maxLeave      = 30 * time.Second
	stopReserve   = stopGrace + 10*time.Second
	leavePollStep = 100 * time.Millisecond
	// removalApplied bounds the wait for this node to apply a leaving peer's removal once the
	// peer's etcd stopped answering.
	removalApplied = 2 * time.Second
)

// leaveBudget is how long the leave may take within ctx; zero or less means there is no time.
func leaveBudget(ctx context.Context) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return maxLeave
	}
	return min(maxLeave, time.Until(deadline)-stopReserve)
}

// planned stops the running etcd of a planned stop or demote: the stop policy first (see
// decision.DecideStop), then etcd. Leaving never fails the stop: whatever goes wrong, etcd is
// stopped within the action's deadline, as it was before graceful leave. restoring says a
// restore from a snapshot stops etcd (restoreStops).
func (a *Agent) planned(ctx context.Context, restoring bool) error {
	// A removed member's etcd exits by itself: that exit must not be reported as a failure.
	if err := a.stopWatcher(ctx); err != nil {
		return err
	}
	if exists(a.cfg.FrozenFile()) {
		a.log.Info("the monitor found etcd frozen: stopping it without a grace period")
		return a.stopEtcd(ctx, noQuorumGrace)
	}
	grace := stopGrace
	if restoring {
		// Its data is given up: etcd's graceful stop would only wait out its request timeout
		// (7 s) for the API servers' watch streams, the clients' outage longer by as much.
		a.log.Info("a restore from a snapshot stops etcd: stopping it without a grace period once its membership is settled")
		grace = noQuorumGrace
	}
	if budget := leaveBudget(ctx); budget > 0 {
		lctx, cancel := context.WithTimeout(ctx, budget)
		answered, left, err := a.leaveOrStay(lctx)
		if err != nil {
			a.log.Warn("stopping without a graceful leave", "err", err)
		}
		cancel()
		switch {
		case !answered:
			// A frozen member serves nothing and is crash-safe (etcd syncs its WAL before it
			// acknowledges): kill it at once, so the peer can go on alone.
			a.log.Info("etcd did not answer its status: stopping it without a grace period")
			grace = noQuorumGrace
		case left:
			// A removed member serves nothing either, and etcd lets it answer for another
			// second before it exits: its clients' requests meanwhile wait out their
			// deadlines. Ended at once, it resets their connections and they go to the peer;
			// its data is never started again (the node rejoins anew).
			a.log.Info("stopping the removed member at once: its clients go to the peer")
			grace = noQuorumGrace
		}
	}
	return a.stopEtcd(ctx, grace)
}

// restoreHolding says why a restore from a snapshot holds etcd stopped (tnfctl restore, its
// record etcdnode.PropRestore: "" none): what this node's data holds is given up.
func (a *Agent) restoreHolding(ctx context.Context) (string, error) {
	r, ok, err := etcdnode.ReadRestore(ctx, a.store)
	if err != nil || !ok {
		return "", err
	}
	return r.Holding(), nil
}

// restoreStops says a restore from a snapshot holds etcd stopped, as read now: a stop's data is
// then given up. A record that cannot be read says no here: the stop is then an ordinary one.
func (a *Agent) restoreStops(ctx context.Context) bool {
	holding, err := a.restoreHolding(ctx)
	return err == nil && holding != ""
}

// leaveOrStay gathers the stop policy's inputs, takes the leave claim when leaving is possible,
// and carries out the decision. answered says the local member answered its status, left that
// it left the member list.
func (a *Agent) leaveOrStay(ctx context.Context) (answered, left bool, err error) {
	s := decision.Stopping{Enabled: a.cfg.GracefulLeave}
	self, err := a.localStatus(ctx)
	answered = err == nil
	// A voter, with or without a leader this instant: the peer may be handing its leadership
	// over for its own leave.
	s.LocalVoter = answered && !self.Learner
	if !s.Enabled || !s.LocalVoter {
		left, err := a.stopDecided(ctx, s, nil, self, 0)
		return answered, left, err
	}
	cli, err := a.client(ctx, a.selfURL())
	if err != nil {
		return answered, false, err
	}
	defer cli.Close()
	voters, peerID, err := a.localMembers(ctx, cli, self.MemberID)
	if err != nil {
		return answered, false, err
	}
	s.Voters = voters
	peer, peerErr := a.probe(ctx, a.peerURL())
	if peerErr == nil {
		s.PeerVoter = !peer.Learner && peer.serving() && peer.ClusterID == self.ClusterID && peer.MemberID == peerID
	}
	// A peer whose etcd does not answer is not leaving: reading the claim would only wait out a
	// request timeout on a member without quorum.
	if s.ReadsLeaveClaim() && peerErr == nil {
		if s.Leave, err = a.leaveClaim(ctx, cli, self.MemberID, peerID, s.NeedsLeaveClaim()); err != nil {
			a.log.Warn("reading or taking the leave claim", "err", err)
		}
	}
	left, err = a.stopDecided(ctx, s, cli, self, peerID)
	return answered, left, err
}

// stopDecided carries out the stop policy's decision; left says this member left the member list.
func (a *Agent) stopDecided(ctx context.Context, s decision.Stopping, cli *clientv3.Client, self status, peerID uint64) (left bool, err error) {
	d := decision.DecideStop(s)
	a.log.Info("stop decision", "decision", d.Action.String(), "reason", d.Reason, "voters", s.Voters,
		"peer_voter", s.PeerVoter, "leave_claim", s.Leave.String())
	switch d.Action {
	case decision.Leave:
		err := a.leave(ctx, cli, self, peerID)
		return err == nil, err
	case decision.StayLastVoter:
		return false, a.waitPeerLeft(ctx, cli, peerID)
	}
	return false, nil
}

// voterIDs reads the IDs of the voters in the member list the member cli reaches holds, not
// linearizable: clientv3's MemberList is, and would wait out the deadline on a member that has
// just lost its quorum.
func (a *Agent) voterIDs(ctx context.Context, cli *clientv3.Client) ([]uint64, error) {
	rctx, cancel := a.request(ctx)
	defer cancel()
	list, err := etcdserverpb.NewClusterClient(cli.ActiveConnection()).MemberList(rctx, &etcdserverpb.MemberListRequest{Linearizable: false})
	if err != nil {
		return nil, fmt.Errorf("member list: %w", err)
	}
	var ids []uint64
	for _, m := range list.Members {
		if !m.IsLearner {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// localMembers returns how many vote in the local member's list and the ID of a voter other
// than selfID (0 when there is none).
func (a *Agent) localMembers(ctx context.Context, cli *clientv3.Client, selfID uint64) (voters int, other uint64, err error) {
	ids, err := a.voterIDs(ctx, cli)
	for _, id := range ids {
		if id != selfID {
			other = id
		}
	}
	return len(ids), other, err
}

// leaveClaim says who holds the leave claim; with take, it first writes this member's ID under
// leaveKey if the key is free or names a member that is gone, in one transaction.
func (a *Agent) leaveClaim(ctx context.Context, cli *clientv3.Client, selfID, peerID uint64, take bool) (decision.Claim, error) {
	self := strconv.FormatUint(selfID, 16)
	for range 3 {
		rctx, cancel := a.request(ctx)
		got, err := cli.Get(rctx, leaveKey)
		cancel()
		if err != nil {
			return decision.ClaimNone, err
		}
		free := clientv3.Compare(clientv3.CreateRevision(leaveKey), "=", 0)
		if len(got.Kvs) > 0 {
			switch holder, _ := strconv.ParseUint(string(got.Kvs[0].Value), 16, 64); holder {
			case selfID:
				return decision.ClaimSelf, nil
			case peerID:
				return decision.ClaimPeer, nil
			}
			// Held by a member that is gone: stale.
			free = clientv3.Compare(clientv3.ModRevision(leaveKey), "=", got.Kvs[0].ModRevision)
		}
		if !take {
			return decision.ClaimNone, nil
		}
		rctx, cancel = a.request(ctx)
		txn, err := cli.Txn(rctx).If(free).Then(clientv3.OpPut(leaveKey, self)).Commit()
		cancel()
		if err != nil {
			return decision.ClaimNone, err
		}
		if txn.Succeeded {
			return decision.ClaimSelf, nil
		}
	}
	return decision.ClaimNone, errors.New("the leave claim kept changing")
}

// leave hands leadership to the peer if this member leads, then removes this member through
// the peer, while both still vote.
func (a *Agent) leave(ctx context.Context, local *clientv3.Client, self status, peerID uint64) error {
	if self.Leader == self.MemberID {
		rctx, cancel := a.request(ctx)
		_, err := local.MoveLeader(rctx, peerID)
		cancel()
		if err != nil {
			return fmt.Errorf("handing leadership to the peer: %w", err)
		}
		a.log.Info("leadership handed to the peer", "peer_member", fmt.Sprintf("%x", peerID))
	}
	cli, err := a.client(ctx, a.peerURL())
	if err != nil {
		return err
	}
	defer cli.Close()
	var transient error
	err = poll.Every(ctx, leavePollStep, func(ctx context.Context) (bool, error) {
		rctx, cancel := a.request(ctx)
		_, err := cli.MemberRemove(rctx, self.MemberID)
		cancel()
		switch {
		case err == nil, errors.Is(err, rpctypes.ErrMemberNotFound):
			return true, nil
		case errors.Is(err, rpctypes.ErrLeaderChanged), errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrUnhealthy):
			// The leadership is still moving, or etcd's strict reconfiguration check wants the
			// peer connected for five seconds before a voter leaves (a member that has just
			// joined or restarted): ask again.
			transient = err
			return false, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("removing this member: %w", cmp.Or(transient, err))
	}
	a.log.Info("left the member list: the peer serves alone", "member", fmt.Sprintf("%x", self.MemberID))
	return nil
}

// peerLeft reports whether the local etcd serves and its member list no longer holds the peer.
func (a *Agent) peerLeft(ctx context.Context, cli *clientv3.Client, peerID uint64) bool {
	st, err := a.localStatus(ctx)
	if err != nil || !st.serving() {
		return false
	}
	_, other, err := a.localMembers(ctx, cli, st.MemberID)
	return err == nil && other != peerID
}

// waitPeerLeft waits until the leaving peer is gone from the local member list, so this node
// stops as the last voter with the newest data; or until the peer's etcd stopped without
// leaving (its leave failed), when there is nothing left to wait for.
func (a *Agent) waitPeerLeft(ctx context.Context, cli *clientv3.Client, peerID uint64) error {
	// silent is the peer's failed probe. The peer may have left between the two looks: a removed
	// member's etcd stops answering at once (etcd 3.5 even fails a Status request on it), and this
	// node applies the removal a moment later (both nodes stopping at once: the peer had left,
	// and this node stopped as if it had not). So after a failed probe the member list is
	// looked at for removalApplied more, without probing again.
	var silent error
	var silentSince time.Time
	err := poll.Every(ctx, leavePollStep, func(ctx context.Context) (bool, error) {
		if a.peerLeft(ctx, cli, peerID) {
			return true, nil
		}
		if silent == nil {
			if _, err := a.probe(ctx, a.peerURL()); err != nil {
				silent, silentSince = err, time.Now()
			}
		} else if time.Since(silentSince) >= removalApplied {
			return false, fmt.Errorf("the peer's etcd stopped without leaving: %w", silent)
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("the peer did not leave in time: %w", ctx.Err())
	}
	if err == nil {
		a.log.Info("the peer has left: stopping as the last voter")
	}
	return err
}
