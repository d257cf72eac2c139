package outofservice

import (
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	fenced := now.Add(-time.Minute)
	seenBefore, seenAfter := fenced.Add(-10*time.Second), fenced.Add(10*time.Second)
	node := NodeState{Found: true}
	tainted := NodeState{Found: true, Tainted: true}
	ours := NodeState{Found: true, Tainted: true, Ours: true}
	ready := func(since time.Duration, attachments int) NodeState {
		n := ours
		n.Ready, n.ReadySince, n.Attachments = true, now.Add(-since), attachments
		return n
	}
	for _, c := range []struct {
		name string
		o    Observation
		want Action
		why  string
	}{
		{"no Node object", Observation{LastFenced: fenced, Node: NodeState{}}, Keep, "no Node object"},
		{"offline, never fenced (a suspicion)", Observation{LastSeenOnline: seenBefore, Node: node}, Keep, "never fenced"},
		{"offline, never seen, never fenced", Observation{Node: node}, Keep, "never fenced"},
		{"fenced after it was last seen", Observation{LastFenced: fenced, LastSeenOnline: seenBefore, Node: node}, Add, "was fenced at 2026-11-26T09:59:00Z"},
		{"fenced, never seen by this node (it restarted alone)", Observation{LastFenced: fenced, Node: node}, Add, "was fenced"},
		{"fenced earlier, back since, now gone again unfenced (a planned reboot)", Observation{LastFenced: fenced, LastSeenOnline: seenAfter, Node: node}, Keep, "not been fenced since"},
		{"fenced the second it was last seen", Observation{LastFenced: fenced, LastSeenOnline: fenced, Node: node}, Keep, "not been fenced since"},
		{"fenced and tainted already", Observation{LastFenced: fenced, LastSeenOnline: seenBefore, Node: ours}, Keep, "already tainted"},
		{"fenced and tainted by someone else", Observation{LastFenced: fenced, LastSeenOnline: seenBefore, Node: tainted}, Keep, "already tainted"},
		{"online, untainted", Observation{PeerOnline: true, LastFenced: fenced, Node: node}, Keep, "no taint of ours"},
		{"online, someone else's taint", Observation{PeerOnline: true, LastFenced: fenced, Node: tainted}, Keep, "no taint of ours"},
		{"back, kubelet not Ready", Observation{PeerOnline: true, LastFenced: fenced, Node: ours}, Keep, "not Ready yet"},
		{"back and Ready, volumes detached", Observation{Now: now, PeerOnline: true, Node: ready(time.Second, 0)}, Remove, "no volume attachment"},
		{"back and Ready, volumes still attached", Observation{Now: now, PeerOnline: true, Node: ready(time.Minute, 2)}, Keep, "2 volume attachments"},
		{"back and Ready past the wait, volumes still attached", Observation{Now: now, PeerOnline: true, Node: ready(DetachWait, 1)}, Remove, "taken off anyway"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Now.IsZero() {
				c.o.Now = now
			}
			got, why := Decide(c.o)
			if got != c.want || !strings.Contains(why, c.why) {
				t.Fatalf("%s (%q), want %s (%q)", got, why, c.want, c.why)
			}
		})
	}
}
