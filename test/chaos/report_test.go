package chaos

import (
	"strings"
	"testing"
	"time"
)

const s = int64(time.Second)

// TestWriteFigures: the first acknowledged write and the longest gap; unknown writes, reads and
// refused CAS not counted, a write in flight at the fault no first write.
func TestWriteFigures(t *testing.T) {
	ops := []Op{
		put(0, "a", "1", 0, 1*s),
		unknown(put(0, "a", "2", 10*s, 12*s)),
		get(1, "a", "1", 12*s, 13*s),
		cas(2, "a", "x", "3", false, "1", 13*s, 14*s),
		put(0, "a", "4", 14*s, 15*s),
		cas(2, "a", "4", "5", true, "", 17*s, 18*s),
	}
	for _, tc := range []struct {
		at   int64
		want time.Duration
	}{
		{10 * s, 5 * time.Second},
		{0, time.Second},
		{s / 2, 14500 * time.Millisecond}, // the put returning at 1 s was in flight
		{19 * s, -1},
	} {
		if got := FirstWrite(ops, tc.at); got != tc.want {
			t.Errorf("first write after %v: %v, want %v", time.Duration(tc.at), got, tc.want)
		}
	}
	for _, tc := range []struct {
		from, to int64
		want     time.Duration
	}{
		{10 * s, 20 * s, 5 * time.Second},
		{0, 20 * s, 14 * time.Second},
		{19 * s, 20 * s, time.Second},
	} {
		if got := LongestGap(ops, tc.from, tc.to); got != tc.want {
			t.Errorf("longest gap in [%v, %v]: %v, want %v", time.Duration(tc.from), time.Duration(tc.to), got, tc.want)
		}
	}
}

// TestReport: a row per cycle, and the summary's counts and p50/max per kind.
func TestReport(t *testing.T) {
	cycles := []Cycle{
		{N: 1, Fault: Fault{Kind: PowerCut, Node: "node2", For: time.Second}, FirstWrite: 2 * time.Second, LongestGap: 2 * time.Second, Recovery: 30 * time.Second, Fences: 1},
		{N: 2, Fault: Fault{Kind: PowerCut, Node: "node1", BMC: BMCUnreachable}, FirstWrite: 40 * time.Second, LongestGap: 40 * time.Second, Recovery: 60 * time.Second, Fences: 0, Admin: "confirm-peer-down on node2"},
		{N: 3, Fault: Fault{Kind: EtcdKill, Node: "node1"}, FirstWrite: 100 * time.Millisecond, LongestGap: time.Second, Recovery: -1},
	}
	row := cycles[1].Row()
	for _, want := range []string{"2", "power-cut node1 off 0s, BMC unreachable", "40.0 s", "60.0 s", "confirm-peer-down on node2"} {
		if !strings.Contains(row, want) {
			t.Errorf("row lacks %q: %s", want, row)
		}
	}
	if !strings.Contains(cycles[2].Row(), " - ") {
		t.Errorf("an overlapped recovery is not shown as -: %s", cycles[2].Row())
	}
	sum := Summary(cycles)
	for _, want := range []string{
		"power-cut                 2  2.0 / 40.0 s",
		"etcd-kill                 1  0.1 / 0.1 s",
		"all                       3",
		"30.0 / 60.0 s",
		"admin steps: 1",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "link-cut") {
		t.Errorf("summary lists a kind no cycle had:\n%s", sum)
	}
	if !strings.HasPrefix(Header(), "cycle") {
		t.Errorf("header: %s", Header())
	}
}
