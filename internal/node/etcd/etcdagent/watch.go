package etcdagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/fastmonitor"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// In a two-voter cluster a dead member takes the quorum with it: nothing is written until the
// survivor runs alone. The watcher is this agent's binary run detached beside etcd from its
// launch: it blocks until etcd exits (a pidfd, or podman wait) and reports the exit to the
// cluster at once (crm_resource --fail), so the stop, the peer's notification and its cluster of
// one follow within a second or two instead of at the next monitor. The agent stops the watcher
// before it stops etcd itself, so a deliberate stop is never reported.

// watcher is the watcher's process, kept like etcd's own (PID and start time in state_dir).
func (a *Agent) watcher() (etcdrun.Process, error) {
	self, err := os.Executable()
	if err != nil {
		return etcdrun.Process{}, err
	}
	return etcdrun.Process{Binary: self, PIDFile: filepath.Join(a.cfg.StateDir, "watcher.pid"), LogFile: a.cfg.LogFile}, nil
}

// startWatcher starts a watcher for the etcd just launched, replacing any earlier one. Failing
// to start it is logged, not fatal: the monitor still finds a dead etcd, only later.
func (a *Agent) startWatcher(ctx context.Context) {
	w, err := a.watcher()
	if err == nil {
		if err = w.Stop(ctx, 0); err == nil {
			err = w.Start([]string{"watch"}, os.Environ())
		}
	}
	if err == nil {
		// What it runs with, for the monitor to compare (etcdnode.Config.WatcherStale).
		err = fsutil.WriteFileAtomic(a.cfg.WatcherParamsFile(), []byte(a.cfg.ReloadableValues()), 0o600)
	}
	if err != nil {
		a.log.Warn("no watcher for etcd: a crash is found by the next monitor", "err", err)
	}
}

// stopWatcher stops the watcher before a deliberate stop of etcd.
func (a *Agent) stopWatcher(ctx context.Context) error {
	w, err := a.watcher()
	if err != nil {
		return err
	}
	return w.Stop(ctx, 0)
}

// watchRetries bounds how often a failed wait (podman unreachable, say) is tried again while
// etcd still runs; after that the monitor alone watches etcd.
const watchRetries = 10

// watch is the watcher's whole life: wait until etcd exits, then report it, unless the agent
// itself stopped it (it removes the launched marker, and stops the watcher first).
func (a *Agent) watch(ctx context.Context) (ocf.Status, error) {
	a.listenForFencing()
	go a.watchLiveness(ctx)
	for attempt := 0; ; attempt++ {
		err := a.rt.Wait(ctx)
		if alive, rerr := a.running(ctx); rerr == nil && !alive {
			break
		}
		if attempt == watchRetries || ctx.Err() != nil {
			return failed(fmt.Errorf("stopped watching etcd; the monitor still does: %w", err))
		}
		time.Sleep(time.Second)
	}
	if !exists(a.cfg.LaunchedFile()) {
		return ocf.Success, nil
	}
	a.log.Error("etcd exited: reporting the failure to the cluster now")
	rctx, cancel := detached(ctx)
	defer cancel()
	if err := a.store.ReportFailure(rctx, a.cfg.Self, attrs.BaseResource(a.cfg.Resource)); err != nil {
		return failed(fmt.Errorf("reporting the failure: %w", err))
	}
	return ocf.Success, nil
}

// detachedBound bounds a step that runs after its action's context ended.
const detachedBound = 30 * time.Second

// detached is ctx without its cancellation, bounded by detachedBound: for a step that must run
// even when the action's deadline has passed (releasing the claim, reporting a crash), but not
// for ever when a cluster tool hangs.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedBound)
}

// livenessInterval is how often the watcher reads the member's status: a frozen member is found
// within that and liveness_timeout, where the promoted monitor (every 5 s) took up to its whole
// interval more.
const livenessInterval = 500 * time.Millisecond

// watchLiveness reads the member's status every livenessInterval, once it has answered one (a
// member that is starting accepts connections and answers no status until it has a leader),
// and reports one that then does not answer within liveness_timeout as the monitor would: frozen,
// marked so that its stop kills it at once.
func (a *Agent) watchLiveness(ctx context.Context) {
	answered := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(livenessInterval):
		}
		frozen, err := fastmonitor.Frozen(a.cfg)
		switch {
		case err == nil:
			answered = true
			continue
		case !frozen || !answered || !exists(a.cfg.LaunchedFile()):
			continue
		}
		a.log.Error("etcd did not answer its status: frozen; reporting the failure to the cluster now", "liveness_timeout", a.cfg.LivenessTimeout, "err", err)
		if err := os.WriteFile(a.cfg.FrozenFile(), nil, 0o600); err != nil {
			a.log.Error("marking etcd frozen", "err", err)
		}
		rctx, cancel := detached(ctx)
		if err := a.store.ReportFailure(rctx, a.cfg.Self, attrs.BaseResource(a.cfg.Resource)); err != nil {
			a.log.Error("reporting the failure", "err", err)
		}
		cancel()
		return
	}
}
