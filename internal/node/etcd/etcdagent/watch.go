package etcdagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
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
