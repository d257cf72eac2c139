package nodesetup

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWaitForEndsAHungLook: a look that never returns by itself (a tool that hangs) ends with
// the wait's deadline, and the wait says what it gave up on.
func TestWaitForEndsAHungLook(t *testing.T) {
	err := waitFor(context.Background(), 50*time.Millisecond, "Corosync to answer", func(ctx context.Context) (bool, error) {
		<-ctx.Done()
		return false, nil
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for Corosync to answer") {
		t.Fatalf("err = %v, want the wait given up", err)
	}
}

// TestKeptWinnerDelay: a setup run again on the settings whose setup sized the race winner's
// delay keeps the delay in the CIB; new settings, a node that never completed a setup, or a
// value no setup writes have it sized again.
func TestKeptWinnerDelay(t *testing.T) {
	for _, tc := range []struct {
		name, applied, version, delay string
		want                          time.Duration
		ok                            bool
	}{
		{"same settings", "865f4577195b", "865f4577195b", "7s", 7 * time.Second, true},
		{"same settings, in milliseconds", "865f4577195b", "865f4577195b", "7500ms", 7500 * time.Millisecond, true},
		{"the longest a setup sizes", "865f4577195b", "865f4577195b", "45s", 45 * time.Second, true},
		{"new settings", "865f4577195b", "0123456789ab", "7s", 0, false},
		{"no completed setup", "", "", "7s", 0, false},
		{"no delay on the device", "865f4577195b", "865f4577195b", "", 0, false},
		{"no delay", "865f4577195b", "865f4577195b", "0s", 0, false},
		{"longer than a setup sizes", "865f4577195b", "865f4577195b", "46s", 0, false},
		{"not a duration", "865f4577195b", "865f4577195b", "seven", 0, false},
	} {
		got, ok := keptWinnerDelay(tc.applied, tc.version, tc.delay)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: keptWinnerDelay(%q, %q, %q) = %v, %v, want %v, %v", tc.name, tc.applied, tc.version, tc.delay, got, ok, tc.want, tc.ok)
		}
	}
}
