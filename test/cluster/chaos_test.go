//go:build integration

package cluster_test

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/test/chaos"
	"github.com/tnf-layer/tnf-layer/test/logline"
)

const (
	// recoveryBound is how long a cycle may take to have both members Promoted and serving.
	recoveryBound = 5 * time.Minute
	// opDeadline is each workload operation's deadline; opPause a client's pause between two.
	opDeadline = 2 * time.Second
	opPause    = 30 * time.Millisecond
)

// TestChaos is the randomized fault campaign (make chaos): one cluster, then CHAOS_CYCLES faults
// drawn from CHAOS_SEED (a fresh seed when unset; logged, and the same seed replays the same
// schedule), under three concurrent clients (one pinned to each node, one on both) whose every
// operation is recorded. After each cycle: both Promoted and serving within recoveryBound, no
// node fenced more than twice per fault, no forced cluster from a learner's data, the history
// so far linearizable. At the end: the whole history linearizable, both members with the same
// revision and hash, the table and the summary.
func TestChaos(t *testing.T) {
	cycles, seed := chaosSettings(t)
	t.Logf("chaos: seed %d, %d cycles (CHAOS_SEED=%d CHAOS_CYCLES=%d replays this schedule)", seed, cycles, seed, cycles)
	plan := chaos.Plan(seed, cycles)
	c := newCluster(t, nil)
	c.up()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := chaos.Init(ctx, c.etcdClient(c.nodes...)); err != nil {
		t.Fatal(err)
	}
	r := &campaign{c: c, seed: seed, plan: plan, seenFences: map[string]bool{},
		workload: chaos.StartWorkload([]*clientv3.Client{c.etcdClient("node1"), c.etcdClient("node2"), c.etcdClient(c.nodes...)}, seed, opDeadline, opPause)}
	t.Cleanup(func() { r.evidence(r.workload.Stop()) })
	r.newFences()
	for i, f := range plan {
		r.cycle(i+1, f, i+1 < len(plan) && plan[i+1].Overlap)
	}
	ops := r.workload.Stop()
	r.checkHistory(ops, 10*time.Minute)
	c.waitSameData()
	t.Logf("%d operations, %d acknowledged writes, %d unknown outcomes; linearizable; both members hold the same data",
		len(ops), count(ops, chaos.Op.Acknowledged), count(ops, func(op chaos.Op) bool { return op.Out.Unknown }))
	t.Logf("seed %d:\n%s\n%s\n\n%s", seed, chaos.Header(), r.table(), chaos.Summary(r.done))
}

// chaosSettings reads CHAOS_CYCLES (the campaign runs only when it is set) and CHAOS_SEED.
func chaosSettings(t *testing.T) (int, uint64) {
	v := os.Getenv("CHAOS_CYCLES")
	if v == "" {
		t.Skip("the fault campaign runs in make chaos (CHAOS_CYCLES)")
	}
	cycles, err := strconv.Atoi(v)
	if err != nil || cycles <= 0 {
		t.Fatalf("CHAOS_CYCLES=%q: want a positive number of cycles", v)
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: want an unsigned 64-bit number", v)
		}
		return cycles, seed
	}
	var b [8]byte
	_, _ = crand.Read(b[:])
	return cycles, binary.BigEndian.Uint64(b[:]) >> 1
}

// campaign is a running fault campaign.
type campaign struct {
	c        *cluster
	seed     uint64
	plan     []chaos.Fault
	workload *chaos.Workload
	done     []chaos.Cycle
	// group is the cycles whose recoveries overlap, the one running included: their fences and
	// forced clusters are checked together, when the last of them has recovered.
	group      []int
	groupLogs  map[string]int
	seenFences map[string]bool // every successful fencing seen in any node's history
	running    int             // the cycle running, for the failure's evidence
	hitAt      time.Time       // when the running cycle's fault was in place
}

// hit marks the running fault in place: its first write is counted from here.
func (r *campaign) hit() { r.hitAt = time.Now() }

// cycle runs one fault: it waits (an overlapping fault comes while the previous recovery
// runs), injects the fault and undoes it; unless the next fault overlaps this recovery, it
// waits for the recovery and checks the cycle.
func (r *campaign) cycle(n int, f chaos.Fault, nextOverlaps bool) {
	c := r.c
	r.running = n
	if f.Overlap {
		time.Sleep(f.Delay)
	} else {
		r.group, r.groupLogs = nil, c.agentLogSizes()
	}
	r.group = append(r.group, len(r.done))
	r.prepareBMC(f)
	r.hit() // until the fault says when it is in place
	began := r.hitAt
	c.t.Logf("cycle %d: %v", n, f)
	cy := chaos.Cycle{N: n, Fault: f, Recovery: -1}
	cy.Admin, cy.Note = r.inject(n, f)
	undone := time.Now()
	if !nextOverlaps {
		cy.Recovery = r.waitRecovered(n, undone).Sub(began)
	}
	ops := r.workload.History.Ops()
	cy.FirstWrite = chaos.FirstWrite(ops, r.workload.History.Since(r.hitAt))
	cy.LongestGap = chaos.LongestGap(ops, r.workload.History.Since(began), r.workload.History.Now())
	r.done = append(r.done, cy)
	if !nextOverlaps {
		r.checkGroup()
		r.checkHistory(ops, time.Minute)
	}
	c.t.Log("\n" + chaos.Header() + "\n" + r.done[len(r.done)-1].Row())
}

// inject does the fault and undoes it (powers the node on again, heals the link, lets etcd
// run on); it returns what it did as an administrator, and a note when the fault found nothing
// to hit.
func (r *campaign) inject(n int, f chaos.Fault) (admin, note string) {
	c := r.c
	switch f.Kind {
	case chaos.PowerCut:
		return r.powerCut(f), ""
	case chaos.PeerStaysAway:
		return r.peerStaysAway(f), ""
	case chaos.LinkCut:
		c.link("down")
		r.hit()
		time.Sleep(f.For)
		c.link("up")
	case chaos.LinkFlap:
		down, up := chaos.FlapTimes(r.seed, n, f.Flaps)
		for i := range down {
			c.link("down")
			if i == 0 {
				r.hit()
			}
			time.Sleep(down[i])
			c.link("up")
			time.Sleep(up[i])
		}
	case chaos.EtcdKill:
		before := c.etcdPIDs(f.Node)
		note = r.signalEtcd(f.Node, unix.SIGKILL, 0)
		r.awaitEffect(f, func() bool { now := c.etcdPIDs(f.Node); return len(now) == 1 && !slices.Equal(now, before) })
		return "", note
	case chaos.EtcdStop:
		return "", r.signalEtcd(f.Node, unix.SIGSTOP, f.For)
	case chaos.KubeletKill, chaos.KubeletStopFails:
		pid := c.standInPID(f.Node, "kubelet")
		if pid == 0 {
			return "", "no kubelet ran on " + f.Node
		}
		fenced := r.fencesOf(c.other(f.Node), f.Node)
		if f.Kind == chaos.KubeletStopFails {
			if out, err := c.run(f.Node, "touch", "/run/tnf-standin/kubelet.stop-fails"); err != nil {
				return "", fmt.Sprintf("%s is off: %v %s", f.Node, err, out)
			}
		}
		_ = unix.Kill(pid, unix.SIGKILL)
		r.hit()
		if f.Kind == chaos.KubeletKill {
			r.awaitEffect(f, func() bool { now := c.standInPID(f.Node, "kubelet"); return now != 0 && now != pid })
		} else {
			r.awaitEffect(f, func() bool { return r.fencesOf(c.other(f.Node), f.Node) > fenced })
		}
	case chaos.CrashBoth:
		c.crashBoth()
		r.hit()
		c.power("on", f.Node)
		time.Sleep(f.For)
		c.power("on", c.other(f.Node))
	case chaos.Reboot:
		c.power("shutdown", f.Node)
		r.hit()
		c.power("on", f.Node)
	case chaos.RebootBoth:
		c.both("shutdown")
		r.hit()
		c.both("on")
	}
	return "", ""
}

// prepareBMC sets the BMCs' fault for a power cut's fencing, before the cut.
func (r *campaign) prepareBMC(f chaos.Fault) {
	switch f.BMC {
	case chaos.BMCSlow:
		r.c.faults(`{"latency": "3s"}`)
	case chaos.BMCErrors:
		r.c.faults(`{"failNext": 4}`)
	case chaos.BMCHang:
		r.c.faults(`{"hangNext": 2}`)
	case chaos.BMCUnreachable:
		r.c.stopEmulator()
	}
}

// powerCut cuts a node's power (prepareBMC set the BMCs' fault), waits (bounded) for its peer
// to fence it, and powers it on again f.For later. With every BMC unreachable the fencing
// cannot complete: the campaign does what the survivor's tnfctl status tells an admin to do.
func (r *campaign) powerCut(f chaos.Fault) string {
	c := r.c
	admin := ""
	if f.BMC == chaos.BMCUnreachable {
		survivor := c.other(f.Node)
		c.power("off", f.Node)
		r.hit()
		c.waitFencingFails(survivor, f.Node, "unreachable")
		admin = r.confirmPeerDown(survivor, f.Node)
		c.startEmulator()
	} else {
		r.cutAndAwaitFence(f)
		if f.BMC != chaos.BMCHealthy {
			c.faults(`{}`)
		}
	}
	time.Sleep(f.For)
	c.power("on", f.Node)
	return admin
}

// cutAndAwaitFence cuts the fault's node's power and waits (awaitEffect) for its peer to fence it.
func (r *campaign) cutAndAwaitFence(f chaos.Fault) {
	survivor := r.c.other(f.Node)
	fenced := r.fencesOf(survivor, f.Node)
	r.c.power("off", f.Node)
	r.hit()
	r.awaitEffect(f, func() bool { return r.fencesOf(survivor, f.Node) > fenced })
}

// confirmPeerDown does what an admin who knows node is off does on survivor.
func (r *campaign) confirmPeerDown(survivor, node string) string {
	out, err := r.c.tnfctl(survivor, "confirm-peer-down", "--yes")
	if err != nil {
		r.c.t.Fatalf("confirm-peer-down --yes on %s with %s off: %v\n%s", survivor, node, err, out)
	}
	return "confirm-peer-down on " + survivor
}

// awaitEffect waits (bounded, and not a check) for the fault's first effect: the node fenced,
// the process replaced. A fault that overlaps a recovery may have none (a survivor that is
// itself still booting fences nobody, and stays inert until its peer is back); the recovery
// that follows is the check.
func (r *campaign) awaitEffect(f chaos.Fault, seen func() bool) {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		if seen() {
			return
		}
	}
	r.c.t.Logf("%v: no effect seen within a minute", f)
}

// peerStaysAway cuts a node's power and, once its peer fenced it, the survivor's too; the
// survivor boots alone and must stay inert until the campaign, as an admin who knows the node
// is off, confirms it down; the node is powered on f.For later.
func (r *campaign) peerStaysAway(f chaos.Fault) string {
	c := r.c
	survivor := c.other(f.Node)
	r.cutAndAwaitFence(f)
	c.power("off", survivor)
	c.power("on", survivor)
	c.stayInert(survivor, 5*time.Second)
	admin := r.confirmPeerDown(survivor, f.Node)
	time.Sleep(f.For)
	c.power("on", f.Node)
	return admin
}

// fencesOf counts the successful fencings of target in node's history (0 when node does not
// answer).
func (r *campaign) fencesOf(node, target string) int {
	_, st, err := r.c.status(node)
	if err != nil || st == nil {
		return 0
	}
	return st.Fencing.Successes(target)
}

// signalEtcd sends sig to node's etcd; a SIGSTOP is followed by SIGCONT after d, unless the
// process is gone by then (the agent replaced it). It returns a note when no etcd ran.
func (r *campaign) signalEtcd(node string, sig unix.Signal, d time.Duration) string {
	c := r.c
	pids := c.etcdPIDs(node)
	if len(pids) != 1 {
		return fmt.Sprintf("%s ran %d etcd processes", node, len(pids))
	}
	_ = unix.Kill(pids[0], sig)
	r.hit()
	c.t.Logf("%s: %v sent to etcd (pid %d)", node, unix.SignalName(sig), pids[0])
	if sig == unix.SIGSTOP {
		time.Sleep(d)
		if slices.Contains(c.etcdPIDs(node), pids[0]) {
			_ = unix.Kill(pids[0], unix.SIGCONT)
		}
	}
	return ""
}

// waitRecovered waits until the cluster is steady again: on steadyPolls polls in a row, both
// nodes Corosync members and Promoted, no fencing pending, and each node's pinned client had
// an operation called after undone succeed. It returns when the steady run began.
func (r *campaign) waitRecovered(n int, undone time.Time) time.Time {
	const steadyPolls = 3
	c := r.c
	since := r.workload.History.Since(undone)
	var steady []time.Time
	c.waitFor(fmt.Sprintf("cycle %d: both Promoted, each serving its pinned client", n), recoveryBound, func() (bool, string) {
		ok, state := r.recovered(since)
		if !ok {
			steady = steady[:0]
			return false, state
		}
		steady = append(steady, time.Now())
		return len(steady) == steadyPolls, fmt.Sprintf("steady for %d polls", len(steady))
	})
	return steady[0]
}

// recovered is one poll of waitRecovered.
func (r *campaign) recovered(since int64) (bool, string) {
	served := map[int]bool{}
	for _, op := range r.workload.History.Ops() {
		if op.Call >= since && !op.Out.Unknown {
			served[op.Client] = true
		}
	}
	if !served[0] || !served[1] {
		return false, fmt.Sprintf("pinned clients served: node1 %v, node2 %v", served[0], served[1])
	}
	m, st, err := r.c.status("node1")
	if err != nil || st == nil {
		return false, fmt.Sprint(err)
	}
	if len(m.Members) != 2 {
		return false, fmt.Sprintf("Corosync members %+v", m.Members)
	}
	if st.Fencing.Pending() {
		return false, fmt.Sprintf("fencing pending: %+v", st.Fencing)
	}
	return st.Role("etcd", "node1") == "Promoted" && st.Role("etcd", "node2") == "Promoted", fmt.Sprintf("%+v", st.Resources)
}

// checkGroup checks the cycles whose recoveries overlapped, once the last has recovered: no node
// fenced more than twice per fault, no cluster forced from a learner's data.
func (r *campaign) checkGroup() {
	c := r.c
	fences := r.newFences()
	byTarget := map[string]int{}
	var who []string
	for _, f := range fences {
		byTarget[f.Target]++
		who = append(who, fmt.Sprintf("%s %s by %s", f.Target, f.Action, f.Delegate))
	}
	for target, n := range byTarget {
		if n > 2*len(r.group) {
			c.t.Fatalf("fence loop: %s fenced %d times for %d faults: %s", target, n, len(r.group), strings.Join(who, ", "))
		}
	}
	last := &r.done[len(r.done)-1]
	last.Fences = len(fences)
	// A second fencing of one fault is within the bound but worth seeing: who did what.
	if len(fences) > 1 {
		if last.Note != "" {
			last.Note += "; "
		}
		last.Note += "fenced: " + strings.Join(who, ", ")
	}
	for _, line := range strings.Split(c.agentLogsSince(r.groupLogs), "\n") {
		if strings.Contains(line, "decision=force-new-cluster") && strings.HasSuffix(logline.Field(line, "local"), ":learner") {
			c.t.Fatalf("a cluster was forced from a learner's data:\n%s", line)
		}
	}
}

// newFences is the successful fencings that no earlier call saw, in the histories of the
// nodes that answer (a node's history goes with a crash of both).
func (r *campaign) newFences() []pcmk.FenceEvent {
	var out []pcmk.FenceEvent
	for _, n := range r.c.nodes {
		_, st, err := r.c.status(n)
		if err != nil || st == nil {
			continue
		}
		for _, f := range st.Fencing {
			key := strings.Join([]string{f.Target, f.Action, f.Delegate, f.Completed}, "|")
			if f.Status == pcmk.FenceSucceeded && !r.seenFences[key] {
				r.seenFences[key] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// checkHistory fails the campaign when the history is not linearizable, or cannot be decided
// within timeout.
func (r *campaign) checkHistory(ops []chaos.Op, timeout time.Duration) {
	c := r.c
	began := time.Now()
	res, info := chaos.Check(ops, timeout)
	switch res {
	case porcupine.Ok:
		c.t.Logf("history of %d operations linearizable (checked in %v)", len(ops), time.Since(began).Round(time.Millisecond))
	case porcupine.Unknown:
		c.t.Fatalf("the linearizability check of %d operations did not finish within %v", len(ops), timeout)
	default:
		path := filepath.Join(r.evidenceDir(), "history.html")
		if err := chaos.Visualize(info, path); err != nil {
			c.t.Logf("visualization: %v", err)
		}
		c.t.Fatalf("the history is not linearizable: %s", path)
	}
}

// evidenceDir is where the campaign's evidence goes: beside the nodes' logs, in the cluster's
// folder (kept after a failure with TNF_KEEP=1, as make chaos sets).
func (r *campaign) evidenceDir() string {
	dir := filepath.Join(r.c.dir, "chaos")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.c.t.Fatal(err)
	}
	return dir
}

// evidence, after a failure: the history and the table so far, and where everything is.
func (r *campaign) evidence(ops []chaos.Op) {
	c := r.c
	if !c.t.Failed() {
		return
	}
	dir := r.evidenceDir()
	if err := chaos.WriteJSONLines(filepath.Join(dir, "history.jsonl"), ops); err != nil {
		c.t.Log(err)
	}
	report := fmt.Sprintf("seed %d, failed in cycle %d\n%s\n%s\n", r.seed, r.running, chaos.Header(), r.table())
	if err := os.WriteFile(filepath.Join(dir, "report.txt"), []byte(report), 0o644); err != nil {
		c.t.Log(err)
	}
	var logs []string
	for _, n := range c.nodes {
		for _, f := range []string{"disk/var-log/pacemaker/pacemaker.log", "disk/var-log/cluster/corosync.log", "disk/var-log/tnf-etcd.log"} {
			logs = append(logs, filepath.Join(c.dir, n, f))
		}
	}
	c.t.Logf("CHAOS FAILED: seed %d, cycle %d (CHAOS_SEED=%d replays it)\n%s\nhistory: %s\nvisualization (if the history was not linearizable): %s\nlogs:\n  %s",
		r.seed, r.running, r.seed, report, filepath.Join(dir, "history.jsonl"), filepath.Join(dir, "history.html"), strings.Join(logs, "\n  "))
	fault := "before the first fault"
	if r.running > 0 {
		fault = fmt.Sprint(r.plan[r.running-1])
	}
	c.t.note(fmt.Sprintf("campaign: seed %d failed in cycle %d of %d (%s); make chaos CHAOS_SEED=%d CHAOS_CYCLES=%d replays it; evidence in %s",
		r.seed, r.running, len(r.plan), fault, r.seed, len(r.plan), dir))
}

func (r *campaign) table() string {
	rows := make([]string, len(r.done))
	for i, cy := range r.done {
		rows[i] = cy.Row()
	}
	return strings.Join(rows, "\n")
}

func count(ops []chaos.Op, match func(chaos.Op) bool) int {
	n := 0
	for _, op := range ops {
		if match(op) {
			n++
		}
	}
	return n
}
