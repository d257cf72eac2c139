package etcdagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencealert"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// The post-stop notification is how the survivor learns that its peer was fenced, but Pacemaker
// drops it when the fencing's result aborts the transition that carried it: the transition
// computed next finds the peer's instance already stopped and notifies nobody (a fencing that
// outlasts the rest of the transition; a slow BMC whose reboot brings the fenced node back into
// Corosync just before the result arrives). So the survivor also acts on the fencing itself:
// Pacemaker's fencing alert reaches the watcher (fencealert), which starts peer-fenced at once;
// the monitor remains the last resort. Either acts only for a voter without a leader whose peer
// Pacemaker's history shows fenced after this etcd was launched and after it last had a leader:
// the proof the notification would have carried. Both bounds are needed: a fencing the survivor
// did not need, followed by the peer's return and a second loss, is after the launch but before
// the second loss's last leader.

// proofSince is the time after which a fencing of the peer proves what a lost notification
// would have: after this etcd's launch (a fencing before it was handled by it), and after a
// monitor last saw it with a leader. A fencing before that (one the survivor did not need, or
// one after which the peer rejoined) cannot explain a later loss of the leader.
func proofSince(launched, leaderSeen time.Time) time.Time {
	if leaderSeen.After(launched) {
		return leaderSeen
	}
	return launched
}

// peerFencedSinceLeader asks Pacemaker's fencing history whether the peer was fenced after
// proofSince. Without an answer (no Pacemaker, say) there is no proof: false.
func (a *Agent) peerFencedSinceLeader(ctx context.Context) bool {
	launched, err := os.Stat(a.cfg.LaunchedFile())
	if err != nil {
		return false
	}
	var leaderSeen time.Time
	if st, err := os.Stat(a.cfg.LeaderSeenFile()); err == nil {
		leaderSeen = st.ModTime()
	}
	status, err := pcmk.Tools{}.Status(ctx)
	if err != nil {
		a.log.Warn("fencing history unavailable", "err", err)
		return false
	}
	return status.Fencing.SucceededAfter(a.cfg.Peer, proofSince(launched.ModTime(), leaderSeen))
}

// leaderlessSincePeerFenced says whether the running member st is a voter without a leader whose
// peer was fenced after it lost its leader (proofSince): the state a lost notification leaves.
func (a *Agent) leaderlessSincePeerFenced(ctx context.Context, st status) bool {
	if st.Learner || st.serving() || !a.peerFencedSinceLeader(ctx) {
		return false
	}
	a.log.Info("a voter without a leader whose peer was fenced since it last had one: handling the peer's stop")
	return true
}

// peerFenced is the action the watcher starts on the fencing alert: what the post-stop
// notification does, if it has not been done (the lock orders the two).
func (a *Agent) peerFenced(ctx context.Context) (ocf.Status, error) {
	if !exists(a.cfg.StartedFile()) {
		return ocf.Success, nil
	}
	if alive, err := a.running(ctx); err != nil || !alive {
		return ocf.Success, err
	}
	st, err := a.localStatus(ctx)
	if err != nil {
		return failed(err)
	}
	if st, err = a.leaderOutlivingPeer(ctx, st); err != nil {
		return failed(err)
	}
	if !a.leaderlessSincePeerFenced(ctx, st) {
		a.log.Info("fencing alert: nothing to do", "learner", st.Learner, "serving", st.serving())
		return ocf.Success, nil
	}
	return a.peerStopped(ctx)
}

// leaderOutlivingPeer waits, at most a LeaderLease, for a voter of two that still has a leader
// to lose it: after a fast fencing the old leader outlives the peer's death for up to two
// election timeouts, and the alert arrives within them. The only voter (the notification forced
// it already) is returned at once.
func (a *Agent) leaderOutlivingPeer(ctx context.Context, st status) (status, error) {
	if st.Learner || !st.serving() {
		return st, nil
	}
	if alone, err := a.onlyVoter(ctx); err != nil || alone {
		return st, err
	}
	for deadline := time.Now().Add(a.cfg.LeaderLease()); st.serving() && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		next, err := a.localStatus(ctx)
		if err != nil {
			return st, err
		}
		st = next
	}
	return st, nil
}

// listenForFencing serves this node's fencing socket for the watcher's life: a message that the
// peer was fenced starts peer-fenced, detached (it restarts etcd, and with it this watcher).
// Without the socket the notification and the monitor still act, only later.
func (a *Agent) listenForFencing() {
	ln, err := fencealert.Listen(a.cfg.FencingSocket)
	if err != nil {
		a.log.Warn("no fencing alerts: the notification and the monitor still act", "err", err)
		return
	}
	go func() {
		_ = fencealert.Serve(ln, fencealert.Allowed(), func(target string) error {
			if target != a.cfg.Peer {
				return nil
			}
			self, err := os.Executable()
			if err == nil {
				p := etcdrun.Process{Binary: self, PIDFile: filepath.Join(a.cfg.StateDir, "peer-fenced.pid"), LogFile: a.cfg.LogFile}
				err = p.Start([]string{"peer-fenced"}, os.Environ())
			}
			if err != nil {
				a.log.Error("fencing alert: starting peer-fenced", "err", err)
				return fmt.Errorf("starting peer-fenced: %w", err)
			}
			a.log.Info("fencing alert: the peer was fenced; peer-fenced started", "peer", target)
			return nil
		})
	}()
}
