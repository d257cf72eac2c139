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

func TestLongestGap(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ms := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Millisecond) }
	w := &Writer{ackedAt: []time.Time{ms(-500), ms(0), ms(100), ms(3100), ms(3200), ms(9000)}}
	for _, tc := range []struct {
		name     string
		from, to int
		want     int
	}{
		{"between two acknowledgements", 0, 3200, 3000},
		{"from counts as the first end", 50, 150, 50},
		{"to counts as the last end", 3200, 8000, 4800},
		{"none in between", 4000, 5000, 1000},
	} {
		if got := w.LongestGap(ms(tc.from), ms(tc.to)); got != time.Duration(tc.want)*time.Millisecond {
			t.Errorf("%s: %v, want %d ms", tc.name, got, tc.want)
		}
	}
}
