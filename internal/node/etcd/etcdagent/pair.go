package etcdagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
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

// readPairs fills in both nodes' published pairs, read beside a ready peer. A value that is no
// pair reads as none on both nodes alike; it is logged.
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
	return nil
}

// errPairAbandoned: the peer's member did not come beside this one's within start_both_timeout.
var errPairAbandoned = errors.New("the peer's member did not come")

// abandonPair stops the local member, which never had a leader and so acknowledged nothing, and
// withdraws the pair for the rest of this boot, so that both nodes decide by the other rules.
func (a *Agent) abandonPair(ctx context.Context, waited error) error {
	a.log.Warn("the peer's member did not start beside this one's: stopping it, and deciding as without the pair until the next boot",
		"start_both_timeout", a.cfg.StartBothTimeout, "err", waited)
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
