package unblock

import (
	"strings"
	"testing"
	"time"
)

func TestShouldAskBMC(t *testing.T) {
	ready := Situation{Enabled: true, After: 10 * time.Minute, WaitingForAll: true, AloneFor: 10 * time.Minute}
	for _, tc := range []struct {
		name   string
		change func(*Situation)
		want   bool
		reason string
	}{
		{"waited long enough", func(*Situation) {}, true, "asking the peer's BMC"},
		{"not enabled", func(s *Situation) { s.Enabled = false }, false, "not enabled"},
		{"peer is a member", func(s *Situation) { s.PeerMember = true }, false, "live Corosync member"},
		{"not waiting", func(s *Situation) { s.WaitingForAll = false }, false, "not waiting"},
		{"quorate, the peer's fencing failing", func(s *Situation) { s.WaitingForAll, s.FencingFails = false, true }, true, "asking the peer's BMC"},
		{"fencing failing, peer a member", func(s *Situation) { s.WaitingForAll, s.FencingFails, s.PeerMember = false, true, true }, false, "live Corosync member"},
		{"fencing failing, too early", func(s *Situation) { s.WaitingForAll, s.FencingFails, s.AloneFor = false, true, time.Minute }, false, "waited alone 1m0s"},
		{"too early", func(s *Situation) { s.AloneFor = 9 * time.Minute }, false, "waited alone 9m0s of 10m0s"},
		{"member and too early", func(s *Situation) { s.PeerMember, s.AloneFor = true, 0 }, false, "live Corosync member"},
		{"disabled beats everything", func(s *Situation) { s.Enabled, s.PeerMember, s.WaitingForAll = false, true, false }, false, "not enabled"},
	} {
		s := ready
		tc.change(&s)
		got, reason := ShouldAskBMC(s)
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: got %v %q, want %v with %q", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}
