package etcdagent

import (
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func TestFencedSince(t *testing.T) {
	launched := time.Date(2026, 11, 22, 9, 55, 30, 500e6, time.UTC)
	ev := func(target string, status pcmk.FenceStatus, completed string) pcmk.FenceEvent {
		return pcmk.FenceEvent{Action: "reboot", Target: target, Status: status, Completed: completed}
	}
	for _, tc := range []struct {
		name    string
		history []pcmk.FenceEvent
		want    bool
	}{
		{"no history", nil, false},
		{"peer fenced after the launch", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 09:55:42Z")}, true},
		{"peer fenced before the launch", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 09:50:00Z")}, false},
		{"within the launch's second", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 09:55:30Z")}, false},
		{"the next second", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 09:55:31Z")}, true},
		{"failed fencing", []pcmk.FenceEvent{ev("node2", "failed", "2026-11-22 09:55:42Z")}, false},
		{"pending fencing", []pcmk.FenceEvent{ev("node2", "pending", "")}, false},
		{"this node fenced, not the peer", []pcmk.FenceEvent{ev("node1", "success", "2026-11-22 09:55:42Z")}, false},
		{"unreadable time", []pcmk.FenceEvent{ev("node2", "success", "soon")}, false},
		{"newest first, an old one after it", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 09:56:00Z"), ev("node2", "success", "2026-11-22 09:40:00Z")}, true},
		{"other zone", []pcmk.FenceEvent{ev("node2", "success", "2026-11-22 10:55:42 +01:00")}, true},
	} {
		if got := pcmk.FenceHistory(tc.history).SucceededAfter("node2", launched); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestProofSince: a fencing counts only after the launch and after a monitor last saw a leader.
// The second case is what a test of a fencing that could not complete found: node1 forced alone
// at :51 after a confirmation, Pacemaker's own fencing of node2 completed at :54, node2 rejoined
// and was promoted, then lost its power again; the :54 fencing was taken for proof of the second
// loss before its own fencing. Its monitor saw a leader at :58 and after.
func TestProofSince(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 24, 12, 15, s, 0, time.UTC) }
	history := []pcmk.FenceEvent{{Target: "node2", Status: "success", Completed: "2026-11-24 12:15:54Z"}}
	for _, tc := range []struct {
		name                 string
		launched, leaderSeen time.Time
		want                 bool
	}{
		{"leader never seen: since the launch", at(51), time.Time{}, true},
		{"leader seen after the fencing", at(51), at(58), false},
		{"leader seen before the fencing", at(40), at(50), true},
		{"launched after the fencing", at(55), at(50), false},
	} {
		if got := pcmk.FenceHistory(history).SucceededAfter("node2", proofSince(tc.launched, tc.leaderSeen)); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
