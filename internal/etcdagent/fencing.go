package etcdagent

import (
	"context"
	"os"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/pcmk"
)

// The post-stop notification is how the survivor learns that its peer was fenced, but Pacemaker
// drops it when the fencing's result aborts the transition that carried it: the transition
// computed next finds the peer's instance already stopped and notifies nobody (seen on TCG
// machines, where the fencing outlasts the rest of the transition). The survivor's monitor then
// finds a voter without a leader; a successful fencing of the peer that completed after this
// etcd was launched is the proof the notification would have carried.

// fencedSince reports whether history holds a successful fencing of target completed after t.
// crm_mon gives whole seconds: an event within t's own second does not count.
func fencedSince(history []pcmk.FenceEvent, target string, t time.Time) bool {
	for _, f := range history {
		if f.Target != target || f.Status != "success" {
			continue
		}
		done, err := time.Parse("2006-01-02 15:04:05Z07:00", f.Completed)
		if err == nil && done.After(t.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// peerFencedSinceLaunch asks Pacemaker's fencing history whether the peer was fenced after this
// node's etcd was launched. Without an answer (no Pacemaker, say) there is no proof: false.
func (a *Agent) peerFencedSinceLaunch(ctx context.Context) bool {
	st, err := os.Stat(a.cfg.LaunchedFile())
	if err != nil {
		return false
	}
	status, err := pcmk.Tools{}.Status(ctx)
	if err != nil {
		a.log.Warn("fencing history unavailable", "err", err)
		return false
	}
	return fencedSince(status.Fencing, a.cfg.Peer, st.ModTime())
}
