package bmc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProvenOff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	off := func(s int) PowerRead { return PowerRead{State: "Off", At: t0.Add(time.Duration(s) * time.Second)} }
	on := func(s int) PowerRead { return PowerRead{State: "On", At: t0.Add(time.Duration(s) * time.Second)} }
	for _, tc := range []struct {
		name   string
		reads  []PowerRead
		want   bool
		reason string
	}{
		{"two Off reads apart", []PowerRead{off(0), off(5)}, true, "Off on 2 reads"},
		{"no reads", nil, false, "0 BMC reads"},
		{"one read", []PowerRead{off(0)}, false, "1 BMC reads"},
		{"reads too close", []PowerRead{off(0), off(1)}, false, "only 1s apart"},
		{"first On", []PowerRead{on(0), off(5)}, false, `read 1 says PowerState "On"`},
		{"second On", []PowerRead{off(0), on(5)}, false, `read 2 says PowerState "On"`},
		{"powering off", []PowerRead{off(0), {State: "PoweringOff", At: t0.Add(5 * time.Second)}}, false, "PoweringOff"},
		{"no answer", []PowerRead{off(0), {Err: errors.New("timeout"), At: t0.Add(5 * time.Second)}}, false, "read 2 failed: timeout"},
		{"lower-case off", []PowerRead{{State: "off", At: t0}, off(5)}, false, `"off"`},
	} {
		got, reason := ProvenOff(tc.reads, 5*time.Second)
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: got %v %q, want %v with %q", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("user admin password s3cret failed (s3cret)", "s3cret"); strings.Contains(got, "s3cret") {
		t.Fatal(got)
	}
}
