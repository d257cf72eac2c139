// Package unblock lets a node that booted alone start OpenShift without its peer: the admin's
// confirmation (tnfctl confirm-peer-down) and the opt-in automatic path that first proves
// through the peer's BMC that the peer is powered off (tnfctl auto-unblock). The decisions are
// pure functions; the steps that change the cluster are in confirm.go.
package unblock

import (
	"fmt"
	"time"
)

// Situation is what a node knows about being alone: booted alone and waiting for its peer, or
// quorate alone with its peer's fencing failing (both wait for proof that the peer is off).
type Situation struct {
	Enabled       bool          // autoUnblock.enabled
	After         time.Duration // autoUnblock.after
	PeerMember    bool          // the peer is in this node's Corosync membership
	WaitingForAll bool          // wait_for_all still holds quorum back
	FencingFails  bool          // the peer's fencing keeps failing (fencewait)
	AloneFor      time.Duration // how long this node has been seen waiting alone
}

// ShouldAskBMC says whether auto-unblock may go on to read the peer's BMC, and why.
func ShouldAskBMC(s Situation) (bool, string) {
	switch {
	case !s.Enabled:
		return false, "autoUnblock is not enabled in cluster.yaml"
	case s.PeerMember:
		return false, "the peer is a live Corosync member: nothing to unblock"
	case !s.WaitingForAll && !s.FencingFails:
		return false, "not waiting for the peer: nothing to unblock"
	case s.AloneFor < s.After:
		return false, fmt.Sprintf("waited alone %v of %v", s.AloneFor.Round(time.Second), s.After)
	}
	return true, fmt.Sprintf("waited alone %v (autoUnblock.after %v): asking the peer's BMC", s.AloneFor.Round(time.Second), s.After)
}
