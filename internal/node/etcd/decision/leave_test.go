package decision

import (
	"fmt"
	"testing"
)

// TestDecideStopTable covers every combination of the stopping node's inputs.
func TestDecideStopTable(t *testing.T) {
	seen := 0
	for _, enabled := range []bool{false, true} {
		for _, localVoter := range []bool{false, true} {
			for voters := 0; voters <= 2; voters++ {
				for _, peerVoter := range []bool{false, true} {
					for c := ClaimNone; c <= ClaimPeer; c++ {
						s := Stopping{Enabled: enabled, LocalVoter: localVoter, Voters: voters, PeerVoter: peerVoter, Leave: c}
						want := StopOnly
						switch {
						case enabled && localVoter && voters == 2 && c == ClaimPeer:
							want = StayLastVoter
						case enabled && localVoter && voters == 2 && peerVoter:
							want = map[Claim]StopAction{ClaimNone: StopOnly, ClaimSelf: Leave}[c]
						}
						got := DecideStop(s)
						name := fmt.Sprintf("%+v", s)
						if got.Action != want {
							t.Errorf("%s: got %s (%s), want %s", name, got.Action, got.Reason, want)
						}
						if got.Reason == "" {
							t.Errorf("%s: no reason", name)
						}
						if s.NeedsLeaveClaim() != (enabled && localVoter && voters == 2 && peerVoter) ||
							s.ReadsLeaveClaim() != (enabled && localVoter && voters == 2) {
							t.Errorf("%s: NeedsLeaveClaim %v, ReadsLeaveClaim %v", name, s.NeedsLeaveClaim(), s.ReadsLeaveClaim())
						}
						seen++
					}
				}
			}
		}
	}
	if seen != 2*2*3*2*3 {
		t.Fatalf("covered %d combinations", seen)
	}
}

// TestAtMostOneLeaves: two nodes stopping at once, in every view each can have of the other,
// with the claim held by at most one of them (it is taken atomically): never both leave, and the
// last voter never leaves.
func TestAtMostOneLeaves(t *testing.T) {
	holders := []struct{ a, b Claim }{
		{ClaimNone, ClaimNone}, {ClaimSelf, ClaimPeer}, {ClaimPeer, ClaimSelf},
		{ClaimSelf, ClaimNone}, {ClaimNone, ClaimSelf},
	}
	for _, h := range holders {
		for va := 0; va <= 2; va++ {
			for vb := 0; vb <= 2; vb++ {
				for _, pa := range []bool{false, true} {
					for _, pb := range []bool{false, true} {
						a := DecideStop(Stopping{Enabled: true, LocalVoter: true, Voters: va, PeerVoter: pa, Leave: h.a})
						b := DecideStop(Stopping{Enabled: true, LocalVoter: true, Voters: vb, PeerVoter: pb, Leave: h.b})
						if a.Action == Leave && b.Action == Leave {
							t.Errorf("both leave: claims %v/%v, voters %d/%d, peer voter %v/%v", h.a, h.b, va, vb, pa, pb)
						}
					}
				}
				if d := DecideStop(Stopping{Enabled: true, LocalVoter: true, Voters: 1, PeerVoter: true, Leave: h.a}); d.Action == Leave {
					t.Errorf("the only voter leaves: %s", d.Reason)
				}
			}
		}
	}
}
