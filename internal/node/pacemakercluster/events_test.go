package pacemakercluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func TestEvents(t *testing.T) {
	healthy := Build(serving(), nil, t0)
	cut := Build(with(powerCut), &healthy, t0.Add(10*time.Second))
	fenced := pcmk.FenceHistory{{Action: "reboot", Target: "master-1", Delegate: "master-0", Status: pcmk.FenceSucceeded, Completed: "2026-12-07 10:00:08Z"}}
	now := t0.Add(10 * time.Second)
	learner := func() Input {
		return with(func(in *Input) { resource(in, "ocf:tnf:etcd", "master-1").Role = "Unpromoted" })
	}
	asLearner := Build(learner(), &cut, now.Add(30*time.Second))
	forming := Build(with(func(in *Input) {
		for i := range in.Pacemaker.Resources {
			if in.Pacemaker.Resources[i].ID == "etcd" {
				in.Pacemaker.Resources[i].Role, in.Pacemaker.Resources[i].Active, in.Pacemaker.Resources[i].Node = "Stopped", false, ""
			}
		}
	}), nil, t0)
	for _, tc := range []struct {
		name    string
		prev    *Status
		cur     Input
		fencing pcmk.FenceHistory
		now     time.Time
		// want: each Event as "Reason: a word of its message"
		want []string
	}{
		{"nothing published before", nil, serving(), nil, now, nil},
		{"nothing published before, a fencing of today", nil, with(powerCut), fenced, now, []string{ReasonFencing + ": master-1 was fenced (reboot)"}},
		{"nothing changed", &healthy, serving(), nil, now, nil},
		{"a power cut", &healthy, with(powerCut), fenced, now, []string{ReasonFencing + ": by master-0", ReasonNodeOffline + ": master-1 is offline",
			ReasonServingAlone + ": etcd serves from master-0 alone"}},
		{"still cut", &cut, with(powerCut), fenced, now.Add(10 * time.Second), nil},
		{"a fencing that failed", &cut, with(powerCut), pcmk.FenceHistory{{Action: "reboot", Target: "master-1", Status: pcmk.FenceFailed,
			Completed: "2026-12-07 10:00:15Z", ExitReason: "timed out"}}, now.Add(10 * time.Second), []string{ReasonFencing + ": failed at 2026-12-07 10:00:15Z: timed out"}},
		{"back as a voter", &cut, serving(), fenced, now.Add(time.Minute), []string{ReasonRejoined + ": master-1's etcd member started again",
			ReasonHealthy + ": both nodes serve"}},
		{"back as a learner", &cut, learner(), nil, now.Add(time.Minute), []string{ReasonRejoined + ": a learner until it has caught up"}},
		{"a learner becomes a voter", &asLearner, serving(), nil, now.Add(time.Minute), []string{ReasonHealthy + ": both nodes serve"}},
		{"the learner stops again", &asLearner, with(powerCut), nil, now.Add(time.Minute), []string{ReasonNodeOffline + ": master-1",
			ReasonServingAlone + ": from master-0 alone"}},
		{"the pair forming: a learner before any voter", &forming, learner(), nil, now, nil},
		{"maintenance mode", &healthy, with(func(in *Input) { in.Pacemaker.MaintenanceMode = true }), nil, now,
			[]string{ReasonInMaintenance + ": maintenance-mode=false"}},
		{"a node in maintenance", &healthy, with(func(in *Input) { in.Pacemaker.Nodes[0].Maintenance = true }), nil, now,
			[]string{ReasonNodeInMaintenance + ": pcs node unmaintenance master-0"}},
		{"a node in standby", &healthy, with(func(in *Input) { in.Pacemaker.Nodes[1].Standby = true }), nil, now,
			[]string{ReasonNodeStandby + ": pcs node unstandby master-1"}},
		{"a status ten minutes old", &healthy, serving(), nil, t0.Add(10 * time.Minute), []string{ReasonStatusStale + ": (10m0s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := Build(tc.cur, tc.prev, tc.now)
			var got []string
			for _, e := range Events(tc.prev, cur, tc.fencing, tc.now) {
				got = append(got, e.Reason+": "+e.Message)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				reason, word, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(got[i], reason+": ") || !strings.Contains(got[i], word) {
					t.Errorf("event %d: %q, want %s with %q", i, got[i], reason, word)
				}
			}
		})
	}
}

func TestDedup(t *testing.T) {
	var d Dedup
	offline := warning(ReasonNodeOffline, "master-1", "master-1 is offline")
	fencing := Event{Reason: ReasonFencing, Key: "fencing|master-1"}
	steps := []struct {
		e    Event
		at   time.Duration
		want bool
	}{
		{offline, 0, true}, {offline, time.Minute, false}, {fencing, time.Minute, true}, {offline, 6 * time.Minute, true},
		{fencing, 23 * time.Hour, false}, {fencing, 25 * time.Hour, true},
	}
	allow := func(d *Dedup, e Event, at time.Time) bool {
		if !d.Due(e, at) {
			return false
		}
		d.Recorded(e, at)
		return true
	}
	var got []bool
	for _, s := range steps {
		got = append(got, allow(&d, s.e, t0.Add(s.at)))
	}
	want := []bool{}
	for _, s := range steps {
		want = append(want, s.want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("allowed %v, want %v", got, want)
	}
	short := Dedup{Window: time.Second}
	if !allow(&short, offline, t0) || allow(&short, offline, t0) || !allow(&short, offline, t0.Add(time.Second)) || !allow(&short, fencing, t0) ||
		allow(&short, fencing, t0.Add(time.Hour)) {
		t.Error("a window of a second: an Event again after a second, a fencing still once a day")
	}
}
