// Package fencewait recognises, in Pacemaker's fencing history, a fencing that keeps failing (a
// node that lost its power with its BMC, a BMC that hangs, a rotated password), which a survivor
// waits on without running etcd alone, and says what is going on and the way out. Pure: the
// caller reads the history and the BMC.
package fencewait

import (
	"fmt"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Failing is a fencing of Target that has failed since its last success.
type Failing struct {
	Target     string    `json:"target"`
	Since      time.Time `json:"since"`    // the first failure since the last success
	Attempts   int       `json:"attempts"` // failures since the last success
	LastReason string    `json:"lastReason,omitempty"`
	Retrying   bool      `json:"retrying"` // an attempt is running now
}

// Find returns target's failing fencing: Pacemaker still holds target unclean (it needs fencing)
// and its history has failures after its last success. Unclean is the check, not the order of the
// history: an attempt in flight when an administrator confirms the node down fails after the
// confirmation's success, and no longer concerns a node Pacemaker holds clean.
func Find(status pcmk.Status, target string) (Failing, bool) {
	f := Failing{Target: target}
	if !status.Node(target).Unclean {
		return f, false
	}
	history := status.Fencing
	lastSuccess, _ := history.LastSuccess(target, time.Time{})
	var last time.Time
	for _, e := range history {
		if e.Target != target {
			continue
		}
		if e.Status == pcmk.FencePending {
			f.Retrying = true
			continue
		}
		at, ok := e.CompletedAt()
		if !ok || e.Status != pcmk.FenceFailed || !at.After(lastSuccess) {
			continue
		}
		f.Attempts++
		if f.Since.IsZero() || at.Before(f.Since) {
			f.Since = at
		}
		if !at.Before(last) {
			last, f.LastReason = at, e.ExitReason
		}
	}
	return f, f.Attempts > 0
}

// Describe is what tnfctl status says: since when the fencing fails, what the BMC answers now
// (bmc, from a read of it) and the way out, or "" when nothing fails.
func (f Failing) Describe(bmc string) string {
	if f.Attempts == 0 {
		return ""
	}
	var why []string
	if bmc != "" {
		why = append(why, bmc)
	}
	if f.LastReason != "" {
		why = append(why, "last attempt: "+f.LastReason)
	}
	attempts := fmt.Sprintf("%d attempts", f.Attempts)
	if f.Attempts == 1 {
		attempts = "1 attempt"
	}
	why = append(why, attempts)
	retry := "Pacemaker retries every minute"
	if f.Retrying {
		retry = "An attempt is running; Pacemaker retries every minute"
	}
	return fmt.Sprintf("fencing of %s failed since %s (%s); etcd waits. %s. If %s is powered off, run `tnfctl confirm-peer-down`.",
		f.Target, Stamp(f.Since), strings.Join(why, "; "), retry, f.Target)
}

// Stamp is a time as tnfctl status prints every time: UTC, to the second, one format for all
// (crm_mon's own times come in the node's zone).
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
