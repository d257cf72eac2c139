package etcdagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// publishPair publishes, at a start, the two-voter membership the stopped local data is a voter
// of (decision.StartBoth). None behind the installer's etcd (its data is not this agent's to
// read yet), and none for the rest of a boot in which the peer's member once did not come.
func (a *Agent) publishPair(ctx context.Context, local decision.Data, installer bool) error {
	var p decision.Pair
	if !installer && !exists(a.cfg.PairAbandonedFile()) {
		p = decision.Pair{Member: local.MemberID, Other: local.OtherVoter}
	}
	return a.cfg.PublishPair(ctx, a.store, p)
}

// withdrawPair withdraws this node's pair before the local membership stops being what it
// published (a cluster created, or the data moved aside to join one): the peer then never
// starts its old member beside it.
func (a *Agent) withdrawPair(ctx context.Context) error {
	if err := a.cfg.PublishPair(ctx, a.store, decision.Pair{}); err != nil {
		return fmt.Errorf("withdrawing %s: %w", etcdnode.AttrPair, err)
	}
	return nil
}

// readPairs fills in both nodes' published pairs. A value that is no pair reads as none on both
// nodes alike; it is logged. This node's reads as none once it gave its pair up for this boot,
// whether or not the CIB shows the withdrawal yet.
func (a *Agent) readPairs(ctx context.Context, in *decision.Input) error {
	for _, r := range []struct {
		node string
		to   *decision.Pair
	}{{a.cfg.Self, &in.Pair}, {a.cfg.Peer, &in.PeerPair}} {
		p, err := etcdnode.ReadPair(ctx, a.store, r.node)
		switch {
		case errors.Is(err, etcdnode.ErrMalformedPair):
			a.log.Warn("read as no pair", "err", err)
		case err != nil:
			return err
		}
		*r.to = p
	}
	if exists(a.cfg.PairAbandonedFile()) {
		in.Pair = decision.Pair{}
	}
	return nil
}

// abandonReserve is what a promote keeps, of its own timeout, for giving its pair up and
// deciding again (a stop, two CIB writes, and a forced start with a large database).
const abandonReserve = 30 * time.Second

// startBothBound is how long a promote waits for the two members to elect a leader:
// start_both_timeout, or less where the promote's own timeout would end the wait first (the
// giving up must run, or the next start publishes the pair again and waits again).
func (a *Agent) startBothBound(ctx context.Context) time.Duration {
	bound := a.cfg.StartBothTimeout
	if deadline, ok := ctx.Deadline(); ok {
		bound = min(bound, time.Until(deadline)-abandonReserve)
	}
	return max(bound, 0)
}

// alonePromoted says this action is a promote that would start both members while the peer is
// not promoted in the same transition: Pacemaker runs the peer's promote only after this one
// ends, so the wait would only end at its bound. Beside a peer whose member already started
// (unknown) it never is. Starts and monitors still decide with the pairs: their scores are what
// has Pacemaker promote both at once.
func (a *Agent) alonePromoted(in decision.Input) bool {
	return a.action == "promote" && in.Peer == decision.PeerReady && !ocf.Contains(a.env.Notify().Promote, a.cfg.Peer)
}

// errPairAbandoned: the two members did not elect a leader within start_both_timeout.
var errPairAbandoned = errors.New("no leader of both members")

// abandonPair stops the local member, whose status never showed a leader (the peer's member did
// not come, or the local one exited), and withdraws the pair for the rest of this boot, so that
// both nodes decide by the other rules. What the member wrote is in its WAL, which the next
// decision reads.
func (a *Agent) abandonPair(ctx context.Context, waited error) error {
	a.log.Warn("no leader of both members (the peer's did not start beside this one's, or this one exited): stopping it, "+
		"and deciding as without the pair until the next boot", "start_both_timeout", a.cfg.StartBothTimeout, "err", waited)
	if err := a.stopEtcd(ctx, noQuorumGrace); err != nil {
		return err
	}
	if err := touch(a.cfg.PairAbandonedFile()); err != nil {
		return err
	}
	if err := a.withdrawPair(ctx); err != nil {
		return err
	}
	return fmt.Errorf("%w: %w", errPairAbandoned, waited)
}
