// Package unblock lets a node that booted alone start OpenShift without its peer: the admin's
// confirmation (tnfctl confirm-peer-down) and the opt-in automatic path that first proves
// through the peer's BMC that the peer is powered off (tnfctl auto-unblock). The decisions are
// pure functions; the steps that change the cluster are in confirm.go.
package unblock

import (
	"fmt"
	"time"
)

// Situation is what a node knows about being alone.
type Situation struct {
	Enabled       bool          // autoUnblock.enabled
	After         time.Duration // autoUnblock.after
	PeerMember    bool          // the peer is in this node's Corosync membership
	WaitingForAll bool          // wait_for_all still holds quorum back
	AloneFor      time.Duration // how long this node has been seen waiting alone
}

// ShouldAskBMC says whether auto-unblock may go on to read the peer's BMC, and why.
func ShouldAskBMC(s Situation) (bool, string) {
	switch {
	case !s.Enabled:
		return false, "autoUnblock is not enabled in cluster.yaml"
	case s.PeerMember:
		return false, "the peer is a live Corosync member: nothing to unblock"
	case !s.WaitingForAll:
		return false, "not waiting for the peer: nothing to unblock"
	case s.AloneFor < s.After:
		return false, fmt.Sprintf("waited alone %v of %v", s.AloneFor.Round(time.Second), s.After)
	}
	return true, fmt.Sprintf("waited alone %v (autoUnblock.after %v): asking the peer's BMC", s.AloneFor.Round(time.Second), s.After)
}

// PowerRead is one read of the peer's PowerState; Err is set when the BMC did not answer.
type PowerRead struct {
	State string
	At    time.Time
	Err   error
}

// PeerProvenOff says whether the reads prove the peer off: at least two, all answered with
// exactly "Off", the first and last at least gap apart. Anything else (On, PoweringOff, no
// answer) proves nothing, and a node that cannot prove it must keep waiting.
func PeerProvenOff(reads []PowerRead, gap time.Duration) (bool, string) {
	if len(reads) < 2 {
		return false, fmt.Sprintf("%d BMC reads, two are needed", len(reads))
	}
	for i, r := range reads {
		if r.Err != nil {
			return false, fmt.Sprintf("BMC read %d failed: %v", i+1, r.Err)
		}
		if r.State != "Off" {
			return false, fmt.Sprintf("BMC read %d says PowerState %q", i+1, r.State)
		}
	}
	if span := reads[len(reads)-1].At.Sub(reads[0].At); span < gap {
		return false, fmt.Sprintf("BMC reads only %v apart, %v needed", span, gap)
	}
	return true, fmt.Sprintf("BMC says PowerState Off on %d reads %v apart", len(reads), reads[len(reads)-1].At.Sub(reads[0].At).Round(time.Second))
}
