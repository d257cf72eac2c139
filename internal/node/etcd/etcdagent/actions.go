package etcdagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun/podman"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

const usage = "usage: etcd {start|stop|monitor|promote|demote|notify|reload-agent|validate-all|meta-data|usage}"

// Main runs the action named in args[1] and returns its exit code.
func Main(args []string, env ocf.Env, stdout, stderr io.Writer) ocf.Status {
	if len(args) != 2 {
		fmt.Fprintln(stderr, usage)
		return ocf.ErrArgs
	}
	action := args[1]
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("agent", "tnf-etcd", "action", action)
	switch action {
	case "meta-data":
		md, err := MetaData()
		if err != nil {
			log.Error("meta-data", "err", err)
			return ocf.ErrGeneric
		}
		stdout.Write(md)
		return ocf.Success
	case "usage", "help":
		fmt.Fprintln(stdout, usage)
		return ocf.Success
	}
	act, ok := actionsByName[action]
	if !ok {
		fmt.Fprintln(stderr, usage)
		return ocf.ErrUnimplemented
	}
	cfg, err := etcdnode.LoadConfig(env)
	if err != nil {
		var oe *ocf.Error
		if errors.As(err, &oe) {
			log.Error("invalid configuration", "err", oe.Msg, "status", oe.Status.String())
			return oe.Status
		}
		log.Error("invalid configuration", "err", err)
		return ocf.ErrConfigured
	}
	log = log.With("node", cfg.Self)
	if err := podman.ConfigTLS(&cfg); err != nil {
		// The manifest and certificates are this node's files: a start fails here only.
		if action == "start" || action == "validate-all" {
			log.Error("cannot start etcd", "err", err.Error())
			return ocf.ErrInstalled
		}
		// Any other action talks to the etcd already launched: with the files it was launched
		// with, whatever the manifest says meanwhile (the operator's installer rewrites it).
		log.Warn("pod manifest unusable: using the TLS files etcd was launched with", "err", err.Error())
		cfg.TLS = cfg.LaunchedTLS()
	}
	// Finish a second before Pacemaker's own timeout would kill the action.
	ctx := context.Background()
	if act.timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, env.Timeout(act.timeout)-time.Second)
		defer cancel()
	}
	a := &Agent{action: action, cfg: cfg, env: env, store: cfg.Store(), rt: runtimeFor(cfg), log: log}
	if !act.unlocked {
		unlock, err := a.lock(ctx)
		if err != nil {
			log.Error("failed", "err", err)
			return ocf.ErrGeneric
		}
		defer unlock()
	}
	st, err := act.run(a, ctx)
	if err != nil {
		log.Error("failed", "err", err, "status", st.String())
	} else {
		log.Debug("done", "status", st.String())
	}
	return st
}

type action struct {
	timeout time.Duration
	run     func(*Agent, context.Context) (ocf.Status, error)
	// unlocked actions change nothing, so they run beside the others (lock.go).
	unlocked bool
}

var actionsByName = map[string]action{
	"validate-all": {timeout: 20 * time.Second, unlocked: true, run: func(*Agent, context.Context) (ocf.Status, error) { return ocf.Success, nil }},
	"start":        {timeout: 300 * time.Second, run: (*Agent).start},
	"stop":         {timeout: 120 * time.Second, run: (*Agent).stop},
	"monitor":      {timeout: 30 * time.Second, run: (*Agent).monitor},
	"promote":      {timeout: 300 * time.Second, run: (*Agent).promote},
	"demote":       {timeout: 120 * time.Second, run: (*Agent).demote},
	"notify":       {timeout: 120 * time.Second, run: (*Agent).notify},
	"reload-agent": {timeout: 20 * time.Second, unlocked: true, run: (*Agent).reloadAgent},
	// Not OCF actions. The watcher the agent starts beside etcd (watch.go) has no deadline and
	// only reports; peer-fenced is what the watcher starts when the fencing alert reports the
	// peer fenced (fencing.go).
	"watch":       {run: (*Agent).watch, unlocked: true},
	"peer-fenced": {timeout: 120 * time.Second, run: (*Agent).peerFenced},
}

func failed(err error) (ocf.Status, error) { return ocf.ErrGeneric, err }

// reloadLockWait bounds reload-agent's wait for the agent's lock.
const reloadLockWait = 2 * time.Second

// reloadAgent takes new values of the reloadable parameters (etcdnode.Parameters): each action
// reads them afresh, and the watcher of a running etcd is started again with them. etcd itself
// keeps running. It takes the agent's lock only briefly: peer-fenced may hold it for as long as
// a cluster of one takes to force, and a failed reload makes Pacemaker restart etcd. Without the
// lock the watcher (and a forced cluster of one it starts) keeps the old values until Pacemaker
// next starts etcd.
func (a *Agent) reloadAgent(ctx context.Context) (ocf.Status, error) {
	if err := a.reloadWatcher(ctx); err != nil {
		a.log.Warn("parameters reloaded for the next actions; the watcher keeps the old ones until Pacemaker next starts etcd", "err", err)
	} else {
		a.log.Info("parameters reloaded")
	}
	return ocf.Success, nil
}

// reloadWatcher starts the watcher of a running etcd again, with this action's parameters.
func (a *Agent) reloadWatcher(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, reloadLockWait)
	unlock, err := a.lock(lctx)
	cancel()
	if err != nil {
		return err
	}
	defer unlock()
	if alive, err := a.running(ctx); err != nil || !alive {
		return err
	}
	a.startWatcher(ctx)
	return nil
}

func (a *Agent) start(ctx context.Context) (ocf.Status, error) {
	if alive, err := a.running(ctx); err != nil {
		return failed(err)
	} else if alive {
		return ocf.Success, touch(a.cfg.StartedFile())
	}
	local, installer, err := a.localData(ctx)
	if err != nil {
		return failed(err)
	}
	if err := touch(a.cfg.StartedFile()); err != nil {
		return failed(err)
	}
	// The etcd version and the pair before the instance mark: a peer that sees this instance
	// started (ready) reads this start's.
	if err := a.publishEtcdVersion(ctx); err != nil {
		return failed(err)
	}
	if err := a.publishPair(ctx, local, installer); err != nil {
		return failed(err)
	}
	// Behind the installer's etcd the peer reads the live member; a record now would say "no data".
	if !installer {
		if err := a.publish(ctx, local); err != nil {
			return failed(err)
		}
	}
	if err := a.store.Set(ctx, a.cfg.Self, etcdnode.AttrInstance, "started", attrs.Reboot); err != nil {
		return failed(err)
	}
	if ocf.Contains(a.env.Notify().Start, a.cfg.Peer) {
		a.waitPeerStarted(ctx)
	}
	return a.settle(ctx, local, installer, false)
}

// peerStartBound bounds how long a start waits for the peer's start that Pacemaker runs in the
// same transition.
const peerStartBound = 20 * time.Second

// waitPeerStarted waits until the peer's instance, which Pacemaker starts in this same
// transition (both nodes back from a crash, a cold boot), has published its data and marked
// itself started. Without the wait this node would decide on the record the peer published
// before it went down, possibly older than its data, and claim the lead its peer then takes
// from it (a failed promote and a restart). A peer whose start fails first only delays this one
// by the bound; the decision then treats it as absent, as before.
func (a *Agent) waitPeerStarted(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, peerStartBound)
	defer cancel()
	err := poll.Every(wctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, ok, err := a.store.Get(ctx, a.cfg.Peer, etcdnode.AttrInstance, attrs.Reboot)
		return err == nil && ok, nil
	})
	if err != nil {
		a.log.Warn("the peer's instance, started in the same transition, did not mark itself started in time", "bound", peerStartBound)
	}
}

// settle is the ready state's step: join a serving peer, or publish whether this node may lead.
func (a *Agent) settle(ctx context.Context, local decision.Data, installer, fenced bool) (ocf.Status, error) {
	_, d, err := a.decide(ctx, local, installer, fenced)
	if err != nil {
		return failed(err)
	}
	score := -1
	switch {
	case d.Action == decision.JoinAsLearner:
		if err := a.join(ctx); err != nil {
			return failed(err)
		}
	case d.Action.Leads():
		score = leadScore(local.Index)
	}
	if err := a.setScore(ctx, score); err != nil {
		return failed(err)
	}
	return ocf.Success, nil
}

func (a *Agent) monitor(ctx context.Context) (ocf.Status, error) {
	alive, err := a.running(ctx)
	if err != nil {
		return failed(err)
	}
	started := exists(a.cfg.StartedFile())
	if !alive {
		switch {
		case !started:
			return ocf.NotRunning, nil
		case exists(a.cfg.LaunchedFile()):
			return failed(fmt.Errorf("etcd exited (see %s)", a.cfg.LogFile))
		}
		local, installer, err := a.localData(ctx)
		if err != nil {
			return failed(err)
		}
		// Once the installer's etcd is gone the peer reads this record (none was published
		// behind it).
		if !installer {
			if err := a.publish(ctx, local); err != nil {
				return failed(err)
			}
		}
		return a.settle(ctx, local, installer, false)
	}
	if err := a.reloadTrust(ctx); err != nil {
		return failed(err)
	}
	// Pacemaker hands the monitor the parameters of today: a change that reached no reload-agent
	// (Pacemaker may leave it out) reaches the watcher here.
	if a.cfg.WatcherStale() {
		a.log.Info("parameters reloaded: the watcher starts again with them", "parameters", a.cfg.ReloadableValues())
		a.startWatcher(ctx)
	}
	st, err := a.localStatus(ctx)
	if err != nil {
		return failed(fmt.Errorf("etcd does not answer: %w", err))
	}
	if !started {
		// Pacemaker restarted while etcd kept running: adopt it.
		if err := touch(a.cfg.StartedFile()); err != nil {
			return failed(err)
		}
	}
	if err := a.publish(ctx, fromStatus(st)); err != nil {
		return failed(err)
	}
	if a.leaderlessSincePeerFenced(ctx, st) {
		// The fencing's notification and alert were both lost (see fencing.go): act on it now.
		if status, err := a.peerStopped(ctx); status != ocf.Success || err != nil {
			return status, err
		}
		// What runs now was launched after the fencing: this check does not fire again.
		return a.monitor(ctx)
	}
	if !st.Learner {
		if st.serving() {
			if err := a.cfg.MarkLeaderSeen(); err != nil {
				return failed(err)
			}
			// Bookkeeping for the next cold boot: a CIB that does not take it now is asked at the
			// next monitor, never a reason to fail a healthy etcd.
			if err := a.cfg.RecordServed(ctx, a.store, st.ClusterID); err != nil {
				a.log.Warn("recording the served cluster", "err", err)
			}
		}
		return ocf.RunningPromoted, a.setScore(ctx, etcdnode.ScoreVoter)
	}
	score := -1
	if leader, err := a.probe(ctx, a.peerURL()); err == nil && learnerReady(st, leader) {
		score = etcdnode.ScoreLearner
	}
	return ocf.Success, a.setScore(ctx, score)
}

func (a *Agent) promote(ctx context.Context) (ocf.Status, error) {
	alive, err := a.running(ctx)
	if err != nil {
		return failed(err)
	}
	if !alive {
		err := a.launchDecided(ctx)
		if errors.Is(err, errPairAbandoned) {
			// Once, by the rules without the pair: it is withdrawn.
			err = a.launchDecided(ctx)
		}
		if err != nil {
			return failed(err)
		}
	}
	st, err := a.waitFor(ctx, "answer", func(status) bool { return true })
	if err != nil {
		return failed(err)
	}
	if st.Learner {
		if err := a.promoteLearner(ctx, st); err != nil {
			return failed(err)
		}
	}
	return ocf.Success, a.setScore(ctx, etcdnode.ScoreVoter)
}

// launchDecided decides on the stopped local data and launches etcd as decided: promote's step.
func (a *Agent) launchDecided(ctx context.Context) error {
	local, in, d, err := a.decideStopped(ctx, false)
	if err != nil {
		return err
	}
	switch {
	case d.Action.Leads():
		return a.lead(ctx, local, d, in.Peer == decision.PeerFenced)
	case d.Action == decision.JoinAsLearner:
		return a.join(ctx)
	}
	_ = a.setScore(ctx, -1)
	return errors.New(d.Reason)
}

// demote stops a voter: the unpromoted role does not serve.
func (a *Agent) demote(ctx context.Context) (ocf.Status, error) {
	alive, err := a.running(ctx)
	if err != nil || !alive {
		return ocf.Success, err
	}
	// A learner keeps running; a member the monitor found frozen is not asked anything.
	if !exists(a.cfg.FrozenFile()) {
		if st, err := a.localStatus(ctx); err == nil && st.Learner {
			return ocf.Success, nil
		}
	}
	restoring := a.restoreStops(ctx)
	if err := a.planned(ctx, restoring); err != nil {
		return failed(err)
	}
	a.publishStopped(restoring)
	return ocf.Success, a.setScore(ctx, -1)
}

// publishStopped publishes the stopped data dir; failing to is logged, not fatal, since the
// record is refreshed at every start and monitor. Not when a restore from a snapshot stops etcd
// (restoring): that data is given up, and reading its WAL took seconds with a gigabyte of data
// (the restore publishes the restored data's record).
func (a *Agent) publishStopped(restoring bool) {
	if restoring {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*a.cfg.RequestTimeout)
	defer cancel()
	local, installer, err := a.localData(ctx)
	if err == nil && !installer {
		err = a.publish(ctx, local)
	}
	if err != nil {
		a.log.Error("publishing the stopped data record", "err", err)
	}
}

// stop never fails once etcd is down: a failed stop means fencing.
func (a *Agent) stop(ctx context.Context) (ocf.Status, error) {
	restoring := a.restoreStops(ctx)
	stop := func(ctx context.Context) error { return a.stopEtcd(ctx, stopGrace) }
	if alive, err := a.running(ctx); err == nil && alive {
		stop = func(ctx context.Context) error { return a.planned(ctx, restoring) }
	}
	if err := stop(ctx); err != nil {
		return failed(err)
	}
	a.publishStopped(restoring)
	for _, err := range []error{
		a.store.Set(ctx, a.cfg.Self, etcdnode.AttrInstance, "", attrs.Reboot),
		a.cfg.SetDecision(ctx, a.store, ""),
		a.setScore(ctx, -1),
		fsutil.RemoveIfExists(a.cfg.StartedFile()),
	} {
		if err != nil {
			a.log.Error("cleaning up after stop", "err", err)
		}
	}
	return ocf.Success, nil
}

// notify reacts to the peer's changes as soon as Pacemaker reports them.
func (a *Agent) notify(ctx context.Context) (ocf.Status, error) {
	n := a.env.Notify()
	if n.Type != "post" {
		return ocf.Success, nil
	}
	switch n.Operation {
	case "stop", "demote":
		gone := n.Stop
		if n.Operation == "demote" {
			gone = n.Demote
		}
		if ocf.Contains(gone, a.cfg.Peer) && !ocf.Contains(gone, a.cfg.Self) {
			return a.peerStopped(ctx)
		}
	case "promote":
		if ocf.Contains(n.Promote, a.cfg.Peer) && exists(a.cfg.StartedFile()) {
			if alive, err := a.running(ctx); err != nil || alive {
				// The peer joined: a fencing of it before now explains no later loss of the leader.
				if st, serr := a.localStatus(ctx); alive && serr == nil && st.serving() {
					err = a.cfg.MarkLeaderSeen()
				}
				return ocf.Success, err
			}
			local, installer, err := a.localData(ctx)
			if err != nil {
				return failed(err)
			}
			return a.settle(ctx, local, installer, false)
		}
	}
	return ocf.Success, nil
}

// peerStopped: the peer's etcd is stopped (fenced, or stopped by Pacemaker). A voter left alone
// restarts as a cluster of one at once; a node that is only ready re-evaluates whether it may
// lead now.
func (a *Agent) peerStopped(ctx context.Context) (ocf.Status, error) {
	if !exists(a.cfg.StartedFile()) {
		return ocf.Success, nil
	}
	alive, err := a.running(ctx)
	if err != nil {
		return failed(err)
	}
	if alive {
		st, err := a.localStatus(ctx)
		if err == nil && st.Learner {
			a.log.Warn("the voter this learner followed is gone; a learner never leads")
			return ocf.Success, nil
		}
		if alone, err := a.onlyVoter(ctx); err == nil && alone {
			a.log.Info("already the only voter; nothing to force")
			return ocf.Success, nil
		}
		if err := a.stopEtcd(ctx, noQuorumGrace); err != nil {
			return failed(err)
		}
	}
	local, in, d, err := a.decideStopped(ctx, true)
	if err != nil {
		return failed(err)
	}
	if !d.Action.Leads() {
		return a.settle(ctx, local, in.Installer, true)
	}
	if !alive {
		// Only ready: let Pacemaker promote through the score.
		return ocf.Success, a.setScore(ctx, leadScore(local.Index))
	}
	if err := a.lead(ctx, local, d, in.Peer == decision.PeerFenced); err != nil {
		return failed(err)
	}
	return ocf.Success, a.setScore(ctx, etcdnode.ScoreVoter)
}

// onlyVoter reports whether the local member is the only voter of its cluster (the peer was a
// learner, or left), so it still has quorum.
func (a *Agent) onlyVoter(ctx context.Context) (bool, error) {
	cli, err := a.client(ctx, a.selfURL())
	if err != nil {
		return false, err
	}
	defer cli.Close()
	voters, _, err := a.localMembers(ctx, cli, 0)
	return voters == 1, err
}
