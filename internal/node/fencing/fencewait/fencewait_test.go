package fencewait

import (
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func ev(target string, status pcmk.FenceStatus, completed, reason string) pcmk.FenceEvent {
	return pcmk.FenceEvent{Action: "reboot", Target: target, Status: status, Completed: completed, ExitReason: reason}
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name     string
		history  []pcmk.FenceEvent
		clean    bool // Pacemaker holds n2 clean: it needs no fencing
		failing  bool
		since    string
		attempts int
		reason   string
		retrying bool
	}{
		{"no history", nil, false, false, "", 0, "", false},
		{"only successes", []pcmk.FenceEvent{ev("n2", "success", "2026-11-24 10:00:00Z", "")}, false, false, "", 0, "", false},
		{"failures after a success, newest first", []pcmk.FenceEvent{
			ev("n2", "failed", "2026-11-24 10:03:00Z", "timed out"),
			ev("n2", "failed", "2026-11-24 10:02:00Z", "refused"),
			ev("n2", "success", "2026-11-24 10:00:00Z", ""),
			ev("n2", "failed", "2026-11-24 09:00:00Z", "old")},
			false, true, "10:02:00", 2, "timed out", false},
		{"a success after the failures", []pcmk.FenceEvent{
			ev("n2", "success", "2026-11-24 10:05:00Z", ""),
			ev("n2", "failed", "2026-11-24 10:03:00Z", "timed out")}, false, false, "", 0, "", false},
		{"oldest first, another zone", []pcmk.FenceEvent{
			ev("n2", "failed", "2026-11-24 11:02:00 +01:00", "a"),
			ev("n2", "failed", "2026-11-24 11:04:00 +01:00", "b")}, false, true, "10:02:00", 2, "b", false},
		{"another node's failures", []pcmk.FenceEvent{ev("n1", "failed", "2026-11-24 10:03:00Z", "x")}, false, false, "", 0, "", false},
		{"an attempt running", []pcmk.FenceEvent{
			{Action: "reboot", Target: "n2", Status: "pending"},
			ev("n2", "failed", "2026-11-24 10:03:00Z", "")}, false, true, "10:03:00", 1, "", true},
		{"only running", []pcmk.FenceEvent{{Action: "reboot", Target: "n2", Status: "pending"}}, false, false, "", 0, "", true},
		// An administrator confirmed n2 off while an attempt ran; the attempt failed after.
		{"failures after a confirmation, n2 clean", []pcmk.FenceEvent{
			ev("n2", "failed", "2026-11-24 10:05:02Z", "timed out"),
			{Action: "off", Target: "n2", Status: "success", Completed: "2026-11-24 10:05:00Z", Delegate: "a human"},
			ev("n2", "failed", "2026-11-24 10:03:00Z", "timed out")}, true, false, "", 0, "", false},
		{"failures, n2 clean (came back, or never needed fencing)", []pcmk.FenceEvent{
			ev("n2", "failed", "2026-11-24 10:03:00Z", "timed out")}, true, false, "", 0, "", false},
	} {
		status := pcmk.Status{Nodes: []pcmk.NodeStatus{{Name: "n1", Online: true}, {Name: "n2", Unclean: !tc.clean}}, Fencing: tc.history}
		f, ok := Find(status, "n2")
		since := ""
		if !f.Since.IsZero() {
			since = f.Since.UTC().Format("15:04:05")
		}
		if ok != tc.failing || since != tc.since || f.Attempts != tc.attempts || f.LastReason != tc.reason || f.Retrying != tc.retrying {
			t.Errorf("%s: %v %+v", tc.name, ok, f)
		}
	}
}

func TestDescribe(t *testing.T) {
	f := Failing{Target: "node2", Since: time.Date(2026, 11, 24, 14, 2, 11, 0, time.UTC), Attempts: 4, LastReason: "timed out"}
	got := f.Describe("BMC 192.0.2.21 unreachable")
	for _, want := range []string{"fencing of node2 failed since ", "(BMC 192.0.2.21 unreachable; last attempt: timed out; 4 attempts); etcd waits.",
		"Pacemaker retries every minute", "If node2 is powered off, run `tnfctl confirm-peer-down`."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if (Failing{Target: "node2"}).Describe("x") != "" {
		t.Error("nothing failing, but something said")
	}
}
