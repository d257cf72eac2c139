//go:build integration

package cluster_test

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/test/logline"
)

// restartTimes is the survivor's restart as a cluster of one as its own logs date it, to the
// millisecond: its fencing of the victim completed (Pacemaker's fencer), its agent launched
// etcd with --force-new-cluster, and etcd became leader. The first is where the agent may act;
// the second ends the agent's part; what follows is etcd's own election.
type restartTimes struct {
	fenced, launched, elected time.Time
}

// agentsPart is the agent's time from the completed fencing to the forced launch.
func (r restartTimes) agentsPart() time.Duration { return r.launched.Sub(r.fenced) }

// election is etcd's time from its forced launch to its leadership.
func (r restartTimes) election() time.Duration { return r.elected.Sub(r.launched) }

// restartTimes reads survivor's Pacemaker log (the fencer's result; the notification's output)
// and the etcd agent's log file (peer-fenced's output and, with the exec runtime, etcd's) for
// the first restart after since; false until all three are there (an action's output reaches
// Pacemaker's log when the action ends).
func (c *cluster) restartTimes(survivor, victim string, since time.Time) (restartTimes, bool) {
	var r restartTimes
	logs := filepath.Join(c.dir, survivor, "disk", "var-log")
	pacemakerLog, agentLog := readFile(filepath.Join(logs, "pacemaker", "pacemaker.log")), readFile(filepath.Join(logs, "tnf-etcd.log"))
	for _, line := range strings.Split(pacemakerLog, "\n") {
		at, ok := logline.PacemakerTime(line, since)
		if ok && !at.Before(since.Truncate(time.Millisecond)) && r.fenced.IsZero() &&
			strings.Contains(line, "(finalize_op)") && strings.Contains(line, "targeting "+victim+" ") && strings.Contains(line, ": OK") {
			r.fenced = at
		}
	}
	if r.fenced.IsZero() {
		return r, false
	}
	for _, line := range strings.Split(pacemakerLog+"\n"+agentLog, "\n") {
		at, ok := logline.AgentTime(line)
		if ok && !at.Before(r.fenced) && logline.Field(line, "msg") == "launching etcd" &&
			logline.Field(line, "force_new_cluster") == "true" && (r.launched.IsZero() || at.Before(r.launched)) {
			r.launched = at
		}
	}
	if r.launched.IsZero() {
		return r, false
	}
	for _, line := range strings.Split(agentLog, "\n") {
		if e, ok := logline.ParseEtcd(line); ok && !e.At.Before(r.launched) && strings.Contains(e.Msg, "became leader at term") {
			r.elected = e.At
			return r, true
		}
	}
	return r, false
}
