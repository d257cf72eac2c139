package etcdcheck

import (
	"testing"
	"time"
)

func TestBackAfter(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		acked  []time.Time
		wantMS int
		wantOK bool
	}{
		{"a write in flight at the fault, then the outage", at(-100, 40, 10800, 10900), 10800, true},
		{"no write in flight", at(-100, 12700, 12800), 12700, true},
		{"no outage: the first after the fault", at(-100, 100, 200, 300), 100, true},
		{"nothing after the fault", at(-200, -100), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Writer{ackedAt: tc.acked}
			back, ok := w.BackAfter(t0)
			if ok != tc.wantOK || (ok && !back.Equal(t0.Add(time.Duration(tc.wantMS)*time.Millisecond))) {
				t.Fatalf("BackAfter = %v %v, want +%d ms %v", back.Sub(t0), ok, tc.wantMS, tc.wantOK)
			}
		})
	}
}
