package etcdagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/base/tcpconns"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// lead carries out a decision that makes this node serve first: start the existing member,
// force a cluster of one, or bootstrap a new one. Creating a cluster needs the claim, taken
// atomically; with the claim held, the peer is looked at again, because it may have started
// serving meanwhile.
func (a *Agent) lead(ctx context.Context, local decision.Data, d decision.Decision, fenced bool) error {
	if d.Action.NeedsClaim() {
		override := ""
		if fenced {
			override = a.cfg.Peer
		}
		holder, err := a.store.Claim(ctx, a.cfg.Self, override)
		if err != nil {
			return err
		}
		if holder != a.cfg.Self {
			return fmt.Errorf("not leading: peer %s holds the force-new-cluster claim", holder)
		}
		defer func() {
			rctx, cancel := detached(ctx)
			defer cancel()
			if err := a.store.Release(rctx, a.cfg.Self); err != nil {
				a.log.Error("releasing the force-new-cluster claim", "err", err)
			}
		}()
		if d, err = a.decideAgain(ctx, local, fenced); err != nil {
			return err
		}
		if !d.Action.NeedsClaim() {
			return fmt.Errorf("not leading after taking the claim: %s", d.Reason)
		}
		if err := a.withdrawPair(ctx); err != nil {
			return err
		}
	}
	switch d.Action {
	case decision.StartExisting, decision.StartBoth:
		if err := a.launch(ctx, fromData); err != nil {
			return err
		}
	case decision.ForceNewCluster:
		committed, torn, err := etcddata.CommitTail(a.cfg.DataDir)
		if err != nil {
			return err
		}
		if torn {
			a.log.Warn("the WAL's last record was cut short by the crash (never acknowledged): cut off as etcd does at start, "+
				"the file as it was kept beside it (*.wal.broken)", "data_dir", a.cfg.DataDir)
		}
		a.log.Info("forcing a new cluster of one", "committed_index", committed)
		if err := a.launch(ctx, forcedAlone); err != nil {
			return err
		}
		a.closePeerClients(ctx)
	case decision.RestoreNewCluster:
		r, err := etcddata.RestoreAsNewCluster(a.cfg.DataDir, a.cfg.Self, a.cfg.PeerURL(a.cfg.SelfIP), a.cfg.Backups, time.Now())
		if err != nil {
			return err
		}
		a.log.Warn("restored the local data as a new cluster of one: the peer's newer data was given up by an administrator",
			"old_data", r.Backup, "token", r.Token, "revision_bump", etcddata.RevisionBump)
		if err := a.launch(ctx, fromData); err != nil {
			return err
		}
	case decision.NewCluster:
		if _, err := etcddata.MoveAside(a.cfg.DataDir, a.cfg.Backups, time.Now()); err != nil {
			return err
		}
		if err := a.launch(ctx, newClusterOf(a.cfg.Self, a.cfg.PeerURL(a.cfg.SelfIP))); err != nil {
			return err
		}
	default:
		return fmt.Errorf("not leading: %s", d.Reason)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if d.Action == decision.StartBoth {
		wctx, cancel = context.WithTimeout(ctx, a.startBothBound(ctx))
	}
	st, err := a.waitFor(wctx, "serve as a voter with a leader", func(s status) bool { return s.serving() && !s.Learner })
	cancel()
	switch {
	case err != nil && d.Action == decision.StartBoth && ctx.Err() == nil:
		return a.abandonPair(ctx, err)
	case err != nil:
		return err
	}
	if d.Action == decision.ForceNewCluster {
		a.tally(ctx, etcdnode.AttrForced, time.Now())
		// A mark left behind only keeps this data from a start of both members, which streaming
		// then replaces: no reason to fail a member that serves.
		if err := etcddata.ForceServed(a.cfg.DataDir); err != nil {
			a.log.Warn("this data stays out of a start of both members until it is forced again or moved aside", "err", err)
		}
	}
	return a.publish(ctx, fromStatus(st))
}

// tally adds one, at when, to the node's counting attribute attr (a Tally). Only the status
// and the metrics read it: a failure is logged, never the action's.
func (a *Agent) tally(ctx context.Context, attr string, when time.Time) {
	v, _, err := a.store.Get(ctx, a.cfg.Self, attr, attrs.Reboot)
	var t etcdnode.Tally
	if err == nil {
		t, err = etcdnode.ParseTally(attr, v)
	}
	if err == nil {
		err = a.store.Set(ctx, a.cfg.Self, attr, etcdnode.FormatTally(etcdnode.Tally{Count: t.Count + 1, Last: when}), attrs.Reboot)
	}
	if err != nil {
		a.log.Error("counting for the status and the metrics", "attribute", attr, "err", err)
	}
}

// walRoom is what a new member's write-ahead log takes beside its database: two of etcd's
// preallocated 64 MB segments, the one in use and the next.
const walRoom = 128 << 20

// makeRoom makes room on the data dir's file system for the peer's whole database, which a
// joining member receives, and its log. Copies moved aside go first, the oldest first, the newest
// last; each deletion is logged and counted (tnfctl status, metrics, alert): a start never fails
// for an old copy. It fails, deleting nothing, when the data cannot fit even without them. keep
// is never deleted: the copy just moved aside when an administrator gave this node's data up
// (the peer's accept-data-loss), the only copy left of the writes given up.
func (a *Agent) makeRoom(ctx context.Context, cli *clientv3.Client, keep string) error {
	rctx, cancel := a.request(ctx)
	st, err := cli.Status(rctx, a.peerURL())
	cancel()
	if err != nil {
		return fmt.Errorf("reading the size of the peer's database: %w", err)
	}
	dropped, err := etcddata.MakeRoom(a.cfg.DataDir, uint64(max(st.DbSize, 0))+walRoom, keep)
	for _, c := range dropped {
		a.log.Warn("deleted moved-aside data before backup_count asked, to make room for the peer's data",
			"deleted", c.Path, "bytes", c.Bytes, "peer_database_bytes", st.DbSize)
		a.tally(ctx, etcdnode.AttrCopiesDropped, time.Now())
	}
	return err
}

// join moves local data aside and joins the serving peer as a learner. Only the joiner changes
// the member list, and only to remove its own stale entry, never the peer's.
func (a *Agent) join(ctx context.Context) error {
	cli, err := a.client(ctx, a.peerURL())
	if err != nil {
		return err
	}
	defer cli.Close()
	rctx, cancel := a.request(ctx)
	list, err := cli.MemberList(rctx)
	cancel()
	if err != nil {
		return fmt.Errorf("peer member list: %w", err)
	}
	selfPeerURL := a.cfg.PeerURL(a.cfg.SelfIP)
	for _, m := range list.Members {
		if m.ID == list.Header.MemberId {
			continue
		}
		a.log.Info("removing this node's stale member entry", "member", fmt.Sprintf("%x", m.ID), "learner", m.IsLearner)
		rctx, cancel := a.request(ctx)
		_, err := cli.MemberRemove(rctx, m.ID)
		cancel()
		if err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
			return fmt.Errorf("removing stale member %x: %w", m.ID, err)
		}
	}
	if err := a.withdrawPair(ctx); err != nil {
		return err
	}
	// Data an administrator gave up on the peer (its accept-data-loss) is, once moved aside, the
	// only copy of the writes given up: it is kept whatever backup_count says and whatever room
	// the join needs, until the join succeeds. Not knowing is keeping.
	gaveUp, err := a.givenUp(ctx, a.cfg.Peer)
	keepGivenUp := err != nil || gaveUp.Present
	backups := a.cfg.Backups
	if keepGivenUp {
		backups = max(backups, 1)
	}
	moved, err := etcddata.MoveAside(a.cfg.DataDir, backups, time.Now())
	if err != nil {
		return err
	}
	if moved != "" {
		a.log.Info("moved local data aside", "to", moved)
	}
	keep := ""
	if keepGivenUp {
		// The newest copy: the one just moved, or, on a try after one that found no room, the
		// one that try moved.
		if copies, err := etcddata.Copies(a.cfg.DataDir); err == nil && len(copies) > 0 {
			keep = copies[len(copies)-1].Path
		}
	}
	if err := a.makeRoom(ctx, cli, keep); err != nil {
		return err
	}
	// Data the peer had given up is gone from this node now: the peer's acceptance has done its work.
	if err := a.store.Set(ctx, a.cfg.Peer, etcdnode.AttrGivenUp, "", attrs.Forever); err != nil {
		a.log.Warn("deleting the peer's given-up record", "err", err)
	}
	added, err := a.addLearner(ctx, cli, selfPeerURL)
	if err != nil {
		return fmt.Errorf("adding this node as a learner: %w", err)
	}
	initial := map[string]string{}
	for _, m := range added.Members {
		name := m.Name
		if m.ID == added.Member.ID {
			name = a.cfg.Self
		}
		if len(m.PeerURLs) > 0 {
			initial[name] = m.PeerURLs[0]
		}
	}
	if err := a.launch(ctx, joining(initial)); err != nil {
		return err
	}
	st, err := a.waitFor(ctx, "answer as a learner", func(status) bool { return true })
	if err != nil {
		return err
	}
	return a.publish(ctx, fromStatus(st))
}

// addLearner adds this node as a learner. etcd derives a new member's ID from its peer URLs and
// the current second, so re-adding within the second the stale entry was removed yields the
// removed ID, which etcd rejects ("member not found"); it is retried until the second turns.
func (a *Agent) addLearner(ctx context.Context, cli *clientv3.Client, peerURL string) (*clientv3.MemberAddResponse, error) {
	for attempt := 0; ; attempt++ {
		rctx, cancel := a.request(ctx)
		added, err := cli.MemberAddAsLearner(rctx, []string{peerURL})
		cancel()
		if err == nil || !errors.Is(err, rpctypes.ErrMemberNotFound) || attempt == 10 {
			return added, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// promoteLearner promotes the local learner through the peer (the leader) once it has caught
// up, waiting within ctx. Through the peer only: etcd 3.6 refuses the request on a learner
// ("rpc not supported for learner"), which a client balancing over both would sometimes ask.
func (a *Agent) promoteLearner(ctx context.Context, self status) error {
	cli, err := a.client(ctx, a.peerURL())
	if err != nil {
		return err
	}
	defer cli.Close()
	before, beforeErr := a.probe(ctx, a.peerURL())
	var notReady error
	err = poll.Every(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		rctx, cancel := a.request(ctx)
		_, err := cli.MemberPromote(rctx, self.MemberID)
		cancel()
		if errors.Is(err, rpctypes.ErrMemberLearnerNotReady) {
			notReady = err
			return false, nil
		}
		return err == nil, err
	})
	switch {
	case err == nil:
		a.log.Info("learner promoted to voter")
		a.recordPromotion(ctx, cli, self.MemberID, before, beforeErr)
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("learner did not catch up in time: %w", cmp.Or(notReady, err))
	default:
		return fmt.Errorf("promoting learner: %w", err)
	}
}

// recordPromotion records the promotion just applied on the peer's leader, with its commit index
// now, for uncommittedTail: etcd answers a promotion once its leader applied it, and until then
// that leader could commit alone. A status's index is the commit index etcd has taken in, which
// may trail raft's own (etcd 3.6 commits a leader's entries after handing the last ones out), so a
// linearizable read through the leader comes first: it returns once the leader applied up to its
// commit index at the read. Only where the leader's term is the one it had before the promotion:
// a leader that restarted in between may have elected itself alone again.
func (a *Agent) recordPromotion(ctx context.Context, cli *clientv3.Client, member uint64, before status, beforeErr error) {
	rctx, cancel := a.request(ctx)
	_, err := cli.Get(rctx, "tnf-promotion", clientv3.WithCountOnly())
	cancel()
	after := status{}
	if err == nil {
		after, err = a.probe(ctx, a.peerURL())
	}
	switch {
	case beforeErr != nil || err != nil:
		a.log.Info("the promotion is not recorded: the leader's status could not be read", "err", cmp.Or(beforeErr, err))
	case before.Term != after.Term || !after.serving():
		a.log.Info("the promotion is not recorded: the leader changed its term or lost its leadership meanwhile",
			"before", before.Term, "after", after.Term)
	default:
		if err := a.cfg.RecordPromotion(decision.Promotion{Member: member, Term: after.Term, Index: after.Index}); err != nil {
			a.log.Warn("recording the promotion", "err", err)
		}
	}
}

// closePeerClients ends this node's connections to the fenced peer's etcd. Its clients here
// (kube-apiserver, which lists both members) keep a connection to a peer that lost its power
// until their own timeouts end it (kube-apiserver: 10 s after a request goes unanswered), and
// send it part of their requests meanwhile; an ended connection makes them choose the member
// that serves at once. Nothing is left to undo: the peer's etcd, back, is connected to anew.
func (a *Agent) closePeerClients(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := tcpconns.Close(ctx, a.cfg.PeerIP, a.cfg.ClientPort)
	if err != nil {
		a.log.Warn("the connections to the fenced peer's etcd end only at their clients' own timeouts", "closed", n, "err", err)
		return
	}
	a.log.Info("ended the connections to the fenced peer's etcd", "closed", n)
}
