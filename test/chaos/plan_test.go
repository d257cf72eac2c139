package chaos

import (
	"slices"
	"testing"
	"time"
)

// TestPlanReplays: the same seed draws the same schedule, another seed another one.
func TestPlanReplays(t *testing.T) {
	a, b, other := Plan(42, 50), Plan(42, 50), Plan(43, 50)
	if !slices.Equal(a, b) {
		t.Fatal("seed 42 drew two different schedules")
	}
	if slices.Equal(a, other) {
		t.Fatal("seeds 42 and 43 drew the same schedule")
	}
	if got := Plan(42, 10); !slices.Equal(got, a[:10]) {
		t.Fatal("a shorter campaign is not the longer one's beginning")
	}
	d1, u1 := FlapTimes(42, 3, 5)
	d2, u2 := FlapTimes(42, 3, 5)
	if !slices.Equal(d1, d2) || !slices.Equal(u1, u2) || len(d1) != 5 {
		t.Fatalf("flap times differ for one seed and cycle: %v %v, %v %v", d1, u1, d2, u2)
	}
}

// TestPlanRules: over many seeds every kind, every BMC fault and overlaps occur, and each
// fault keeps the rules its execution relies on.
func TestPlanRules(t *testing.T) {
	kinds, bmc, overlaps := map[Kind]int{}, map[BMCFault]int{}, 0
	for seed := range uint64(20) {
		faults := Plan(seed, 100)
		for i, f := range faults {
			kinds[f.Kind]++
			bmc[f.BMC]++
			for _, rule := range []struct {
				broken bool
				what   string
			}{
				{f.Node != "" && !slices.Contains(Nodes, f.Node), "names no node of the cluster"},
				{(f.Node == "") != (f.Kind == LinkCut || f.Kind == LinkFlap || f.Kind == RebootBoth), "has a node where it hits none, or none where it hits one"},
				{f.BMC != BMCHealthy && f.Kind != PowerCut, "has a BMC fault outside a power cut's fencing"},
				{f.Kind == LinkCut && (f.For < time.Second || f.For > 30*time.Second), "cuts the link outside 1–30 s"},
				{f.Kind == EtcdStop && (f.For < time.Second || f.For > 25*time.Second), "stops etcd outside 1–25 s"},
				{f.Kind == PowerCut && f.For > 20*time.Second, "keeps a node off longer than 20 s"},
				{f.Kind == LinkFlap && (f.Flaps < 3 || f.Flaps > 6), "flaps outside 3–6 times"},
				{f.Overlap && i == 0, "overlaps in the first cycle"},
				{f.Overlap && !faults[max(i-1, 0)].leavesRecovery(), "overlaps a fault that leaves no recovery"},
				{f.Overlap && (f.needsAdmin() || faults[max(i-1, 0)].needsAdmin()), "overlaps where an admin steps in"},
				{f.Kind == PeerStaysAway && f.For > 20*time.Second, "keeps the node away longer than 20 s after the confirmation"},
				{f.Overlap && f.Delay > 10*time.Second, "comes later than 10 s into the recovery"},
				{!f.Overlap && f.Delay != 0, "has a delay without overlapping"},
			} {
				if rule.broken {
					t.Errorf("seed %d cycle %d: %v %s", seed, i+1, f, rule.what)
				}
			}
			if f.Overlap {
				overlaps++
			}
		}
	}
	for _, k := range Kinds {
		if kinds[k] == 0 {
			t.Errorf("no %s in 2000 cycles", k)
		}
	}
	for _, f := range bmcFaults {
		if bmc[f] == 0 {
			t.Errorf("no BMC fault %q in 2000 cycles", f)
		}
	}
	if overlaps == 0 {
		t.Error("no fault overlapped a recovery in 2000 cycles")
	}
}

func TestFaultString(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Kind: PowerCut, Node: "node2", For: 3 * time.Second, BMC: BMCHang}, "power-cut node2 off 3s, BMC hang"},
		{Fault{Kind: LinkCut, For: 1500 * time.Millisecond}, "link-cut 1.5s"},
		{Fault{Kind: LinkFlap, Flaps: 4}, "link-flap ×4"},
		{Fault{Kind: EtcdStop, Node: "node1", For: 2 * time.Second, Overlap: true, Delay: time.Second}, "etcd-stop node1 2s; 1s into recovery"},
		{Fault{Kind: CrashBoth, Node: "node2", For: 0}, "crash-both node2 first, the other 0s later"},
		{Fault{Kind: RebootBoth}, "reboot-both"},
		{Fault{Kind: PeerStaysAway, Node: "node1", For: 4 * time.Second}, "peer-stays-away node1 off 4s"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.f, got, tc.want)
		}
	}
}
