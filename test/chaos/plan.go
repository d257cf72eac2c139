// Package chaos is the randomized fault campaign's logic that needs no cluster: the fault
// schedule drawn from a seed, the concurrent key-value workload and its recorded history, the
// linearizability check of that history (porcupine, a key-value model partitioned by key) and
// the per-cycle report. test/cluster's TestChaos drives it on the real two-node harness.
package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Kind is a kind of fault.
type Kind string

const (
	PowerCut         Kind = "power-cut"          // a node loses its power; it is powered on again later
	LinkCut          Kind = "link-cut"           // the cluster link goes down for For, then heals
	LinkFlap         Kind = "link-flap"          // the cluster link goes down and up Flaps times
	EtcdKill         Kind = "etcd-kill"          // SIGKILL to a node's etcd
	EtcdStop         Kind = "etcd-stop"          // SIGSTOP to a node's etcd for For, then SIGCONT
	KubeletKill      Kind = "kubelet-kill"       // kubelet's stand-in killed: Pacemaker restarts it
	KubeletStopFails Kind = "kubelet-stop-fails" // killed, and its stop fails: the node is fenced
	CrashBoth        Kind = "crash-both"         // both nodes lose their power at once
	Reboot           Kind = "reboot"             // a planned reboot of a node
	RebootBoth       Kind = "reboot-both"        // a planned reboot of both nodes at once
	// PeerStaysAway: a node loses its power and stays off; the survivor, fenced it and alone,
	// loses its power too and boots alone: inert until an admin confirms the node down.
	PeerStaysAway Kind = "peer-stays-away"
)

// Kinds are every kind, in the order the summary lists them.
var Kinds = []Kind{PowerCut, LinkCut, LinkFlap, EtcdKill, EtcdStop, KubeletKill, KubeletStopFails, CrashBoth, Reboot, RebootBoth, PeerStaysAway}

// BMCFault is what the BMCs do while a power cut's fencing runs.
type BMCFault string

const (
	BMCHealthy     BMCFault = ""
	BMCSlow        BMCFault = "latency"     // every request answered 3 s late
	BMCErrors      BMCFault = "5xx"         // the next requests get HTTP 503
	BMCHang        BMCFault = "hang"        // the next requests hang until the client gives up
	BMCUnreachable BMCFault = "unreachable" // no BMC answers: the fencing cannot complete, an admin confirms
)

var bmcFaults = []BMCFault{BMCSlow, BMCErrors, BMCHang, BMCUnreachable}

// Nodes are the two nodes' names: node1 wins the fence race.
var Nodes = []string{"node1", "node2"}

// Fault is one cycle's fault.
type Fault struct {
	Kind Kind
	// Node is the node it hits; empty for the link and a planned reboot of both; for a crash of
	// both, the node that powers on first.
	Node string
	// For is how long the link stays cut, etcd stays stopped, a node cut from power stays off
	// after its fencing (after the admin's confirmation, when its peer stayed away), or the
	// second node waits before it powers on after both crashed.
	For   time.Duration
	Flaps int      // LinkFlap: how many times the link goes down
	BMC   BMCFault // PowerCut: the BMCs' fault during its fencing
	// Overlap: the fault comes Delay after the previous fault was undone (its node powered on
	// again, its link healed), while that recovery still runs.
	Overlap bool
	Delay   time.Duration
}

func (f Fault) String() string {
	s := string(f.Kind)
	if f.Node != "" {
		s += " " + f.Node
	}
	switch f.Kind {
	case LinkCut, EtcdStop:
		s += " " + f.For.String()
	case LinkFlap:
		s += fmt.Sprintf(" ×%d", f.Flaps)
	case PowerCut, PeerStaysAway:
		s += " off " + f.For.String()
	case CrashBoth:
		s += " first, the other " + f.For.String() + " later"
	}
	if f.BMC != BMCHealthy {
		s += ", BMC " + string(f.BMC)
	}
	if f.Overlap {
		s += fmt.Sprintf("; %v into recovery", f.Delay)
	}
	return s
}

// leavesRecovery says whether undoing the fault leaves a recovery running that a next fault can
// overlap: a node booting and joining, a member catching up.
func (f Fault) leavesRecovery() bool {
	switch f.Kind {
	case PowerCut, CrashBoth, Reboot, RebootBoth, KubeletStopFails, LinkCut:
		return !f.needsAdmin()
	}
	return false
}

// needsAdmin says whether the fault leads to a state only an admin ends: such a fault never
// overlaps, nor is overlapped, so the admin's step meets the state it expects.
func (f Fault) needsAdmin() bool { return f.BMC == BMCUnreachable || f.Kind == PeerStaysAway }

// Plan draws cycles faults from seed: the same seed gives the same schedule (of this version of
// the plan). A fault overlaps the previous one's recovery one time in five where that recovery
// exists, unless it needs an admin.
func Plan(seed uint64, cycles int) []Fault {
	r := rand.New(rand.NewPCG(seed, seed^0x74e66c61796572))
	between := func(lo, hi time.Duration) time.Duration {
		step := 100 * time.Millisecond
		return lo + time.Duration(r.IntN(int((hi-lo)/step)+1))*step
	}
	faults := make([]Fault, 0, cycles)
	for i := range cycles {
		f := Fault{Kind: Kinds[r.IntN(len(Kinds))], Node: Nodes[r.IntN(len(Nodes))]}
		switch f.Kind {
		case PeerStaysAway:
			f.For = between(0, 20*time.Second)
		case PowerCut:
			f.For = between(0, 20*time.Second)
			if r.IntN(3) == 0 {
				f.BMC = bmcFaults[r.IntN(len(bmcFaults))]
			}
		case LinkCut:
			f.Node, f.For = "", between(time.Second, 30*time.Second)
		case LinkFlap:
			f.Node, f.Flaps = "", 3+r.IntN(4)
		case EtcdStop:
			f.For = between(time.Second, 25*time.Second)
		case CrashBoth:
			f.For = between(0, 10*time.Second)
		case RebootBoth:
			f.Node = ""
		}
		if i > 0 && faults[i-1].leavesRecovery() && !f.needsAdmin() && r.IntN(5) == 0 {
			f.Overlap, f.Delay = true, between(0, 10*time.Second)
		}
		faults = append(faults, f)
	}
	return faults
}

// FlapTimes are how long the link stays down and then up at each flap of a LinkFlap drawn from
// seed and cycle: between half a second and three seconds each.
func FlapTimes(seed uint64, cycle, flaps int) (down, up []time.Duration) {
	r := rand.New(rand.NewPCG(seed, uint64(cycle)))
	for range flaps {
		down = append(down, time.Duration(500+r.IntN(2501))*time.Millisecond)
		up = append(up, time.Duration(500+r.IntN(2501))*time.Millisecond)
	}
	return down, up
}
