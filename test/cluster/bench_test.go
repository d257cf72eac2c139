//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// failoverFault is one way to lose a node: inject makes the fault, heal undoes what the
// fence's reboot does not (nil when the reboot is enough).
type failoverFault struct {
	name             string
	survivor, victim string
	inject, heal     func(*cluster)
}

// failoverTimeline is one run, each duration from the fault's injection.
type failoverTimeline struct {
	began    time.Time     // the fault's injection
	detected time.Duration // the survivor's Corosync no longer counts the victim a member
	fenced   time.Duration // the survivor's fencing history shows the victim fenced
	written  time.Duration // the survivor's etcd acknowledged a write
	// The restart as the survivor's logs date it, and the write's acknowledgement on the same
	// clock: what the agent and etcd each took.
	restart restartTimes
	acked   time.Time
	// What the API's clients saw through the survivor's API server: the outage, the longest gap
	// between acknowledged writes until both nodes served again, and the relists of the
	// informers through the survivor's and through the victim's API server.
	api                            apiOutage
	apiGap                         time.Duration
	survivorRelists, victimRelists int
}

// fencedToWrite is from the completed fencing to the first acknowledged write.
func (t failoverTimeline) fencedToWrite() time.Duration { return t.acked.Sub(t.restart.fenced) }

// BenchmarkClusterFailover: from a fault to the first write the survivor's etcd acknowledges,
// with the phases broken out: detection (Corosync membership), fencing (fence delay and
// the second level's power-off through the BMC), then from the completed fencing to the write, split
// into the agent's part (to the launch of etcd as a cluster of one) and etcd's election. One
// cluster per fault; between runs the victim comes back and both are promoted again. Runs per
// fault: TNF_FAILOVER_RUNS (default 10). Detection and fencing are polled every 200 ms (tnfctl
// status -o json on the survivor), so each is known to about ±0.3 s; the fencing's completion,
// the launch and the election are the survivor's own log times (milliseconds), and the write
// is its acknowledgement, sent every 200 ms.
//
// The same runs measure the API as its clients see it: kube-apiserver runs on both nodes, a
// writer creates an object through the survivor's API server every 100 ms, an informer watches
// through each API server, and the survivor's /readyz is polled every 200 ms (apiProbe).
func BenchmarkClusterFailover(b *testing.B) {
	benchFailovers(b, "TNF_FAILOVER_RUNS", upLayersAPICluster)
}

// upLayersAPICluster is an API cluster of the layer, both nodes serving.
func upLayersAPICluster(b *testing.B) *cluster {
	c := newAPICluster(b, nil)
	c.upWithAPI()
	return c
}

// benchFailovers runs each of failoverFaults on a cluster of its own that up makes, as often as
// the variable runs says; between runs the victim comes back and both serve etcd again.
func benchFailovers(b *testing.B, runsVariable string, up func(*testing.B) *cluster) {
	runs := runsFromEnv(b, runsVariable)
	for _, f := range failoverFaults() {
		b.Run(f.name+stackSuffix(b), func(b *testing.B) {
			c := up(b)
			var timelines []failoverTimeline
			for i := range runs {
				probe := c.probeAPI(fmt.Sprintf("%s-%d", f.name, i), f.survivor)
				tl := c.failover(f, i)
				tl.api = c.apiOutage(probe, tl.began)
				if f.heal != nil {
					f.heal(c)
				}
				c.waitBothServing(f.survivor)
				var relists map[string]int
				tl.apiGap, relists = c.finishAPIProbe(probe, tl.began)
				tl.survivorRelists, tl.victimRelists = relists[f.survivor], relists[f.victim]
				restart := ""
				if !c.field() {
					restart = fmt.Sprintf("; fenced → launch %v, launch → leader %v, fenced → write %v",
						tl.restart.agentsPart(), tl.restart.election(), tl.fencedToWrite())
				}
				b.Logf("run %d: detected %v, fenced %v, written %v%s; API: written %v, longest gap %v, /readyz ok %v, relists %d (survivor) %d (victim)",
					i+1, tl.detected, tl.fenced, tl.written, restart, tl.api.back, tl.apiGap, tl.api.readyz, tl.survivorRelists, tl.victimRelists)
				timelines = append(timelines, tl)
			}
			report(b, timelines, c.field())
			c.reportDefects(b)
		})
	}
}

// failoverFaults are the ways to lose a node that BenchmarkClusterFailover measures and
// TestAPIFailovers checks.
func failoverFaults() []failoverFault {
	powerOff := func(node string) func(*cluster) { return func(c *cluster) { c.power("off", node) } }
	powerOn := func(node string) func(*cluster) { return func(c *cluster) { c.powerBackOn(node) } }
	return []failoverFault{
		{name: "race-loser-killed", survivor: "node1", victim: "node2", inject: powerOff("node2"), heal: powerOn("node2")},
		{name: "race-winner-killed", survivor: "node2", victim: "node1", inject: powerOff("node1"), heal: powerOn("node1")},
		{name: "network-split", survivor: "node1", victim: "node2",
			inject: func(c *cluster) { c.link("down") }, heal: func(c *cluster) { c.link("up") }},
		// Frozen with its power on: the first level finds it On and must not shortcut; the second
		// waits the race delay and reboots it.
		{name: "race-winner-hangs", survivor: "node2", victim: "node1", inject: func(c *cluster) { c.hang("node1") }},
		// A BMC that answers every request in 3 s: the first level proves the node off, later
		// than after a power cut, or gives up and the second powers it off and on.
		{name: "race-winner-killed-slow-bmc", survivor: "node2", victim: "node1",
			inject: func(c *cluster) { c.faults(`{"latency": "3s"}`); c.power("off", "node1") },
			heal:   func(c *cluster) { c.faults(`{}`); c.powerBackOn("node1") }},
	}
}

// TestAPIFailovers: each fault of BenchmarkClusterFailover once, on the API cluster. The
// survivor's API takes writes again; no object the API acknowledged is lost or reaches either
// informer out of order; no list through the survivor is stale; the victim comes back and both
// API servers serve. The figures are the benchmark's; here they are only logged. In make
// cluster-test.
func TestAPIFailovers(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	for _, f := range failoverFaults() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			c := newAPICluster(t, nil)
			c.upWithAPI()
			probe := c.probeAPI(f.name, f.survivor)
			tl := c.failover(f, 0)
			outage := c.apiOutage(probe, tl.began)
			if f.heal != nil {
				f.heal(c)
			}
			c.waitRoles(f.survivor, bothPromoted)
			gap, relists := c.finishAPIProbe(probe, tl.began)
			t.Logf("%s: etcd's first write %v, the API's %v, /readyz ok %v, longest API gap %v, relists %v",
				f.name, tl.written.Round(10*time.Millisecond), outage.back.Round(10*time.Millisecond),
				outage.readyz.Round(10*time.Millisecond), gap.Round(10*time.Millisecond), relists)
		})
	}
}

// apiProbe is what a benchmark run watches through the API: a writer through one node's API
// server with its reader, an informer through each API server (apiClients), and that node's
// /readyz.
type apiProbe struct {
	*apiClients
	node  string
	ready *readyzLog
}

func (c *cluster) probeAPI(name, node string) *apiProbe {
	c.t.Helper()
	return &apiProbe{apiClients: c.startAPIClients(name, node), node: node, ready: c.logReadyz(node)}
}

// apiOutage is a fault as the API's clients saw it, each from the fault: the acknowledged write
// that ended the longest wait for one, and /readyz answering ok again for good.
type apiOutage struct{ back, readyz time.Duration }

// apiOutage waits until the probe's writes are acknowledged again and /readyz answers ok, and
// measures the outage that began at fault.
func (c *cluster) apiOutage(p *apiProbe, fault time.Time) apiOutage {
	c.t.Helper()
	c.waitWrites(p.writer, "after the fault, through "+p.node+"'s API")
	var o apiOutage
	c.waitFor(p.node+"'s /readyz ok again", settle, func() (bool, string) {
		var ok bool
		o.readyz, ok = p.ready.ReadyAfter(fault)
		return ok, "not yet"
	})
	back, _ := p.BackAfter(fault)
	o.back = back.Sub(fault)
	return o
}

// finishAPIProbe waits until both API servers are ready and the probe's writes acknowledged,
// stops its clients (failing on a stale read or an acknowledged object an informer missed) and
// returns the longest gap between acknowledged writes since fault and each node's relists.
func (c *cluster) finishAPIProbe(p *apiProbe, fault time.Time) (time.Duration, map[string]int) {
	c.t.Helper()
	for _, n := range c.nodes {
		c.waitAPIReady(n)
	}
	c.waitWrites(p.writer, "both serving, through "+p.node+"'s API")
	gap := p.LongestGap(fault, time.Now())
	p.ready.Stop()
	return gap, c.stopAPIClients(p.apiClients)
}

// failover injects f's fault and follows the survivor until its etcd takes a write.
func (c *cluster) failover(f failoverFault, run int) failoverTimeline {
	c.t.Helper()
	fencedBefore := c.fences(f.survivor, f.victim)
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	began := time.Now()
	f.inject(c)
	tl := failoverTimeline{began: began}
	// Writes start once the fault is complete: one sent earlier may still reach both members.
	written := c.firstWrite(ctx, fmt.Sprintf("bench/%s/%d", f.name, run), f.survivor)
	for tl.detected == 0 || tl.fenced == 0 {
		if ctx.Err() != nil {
			c.t.Fatalf("%s run %d: no detection or fencing seen on %s within %v (%+v)", f.name, run+1, f.survivor, settle, tl)
		}
		m, st, err := c.status(f.survivor)
		at := time.Since(began)
		if err == nil && tl.detected == 0 && !m.Nodes[f.victim] {
			tl.detected = at
		}
		if err == nil && st != nil && tl.fenced == 0 && st.Fencing.Successes(f.victim) > fencedBefore {
			tl.fenced = at
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case at := <-written:
		tl.acked, tl.written = at, at.Sub(began)
	case <-ctx.Done():
		c.t.Fatalf("%s run %d: %s's etcd took no write within %v", f.name, run+1, f.survivor, settle)
	}
	if c.field() {
		return tl // podman-etcd's log is not the agent's: the restart is not split
	}
	c.waitFor(f.survivor+"'s logs dating its restart", 30*time.Second, func() (bool, string) {
		var ok bool
		tl.restart, ok = c.restartTimes(f.survivor, f.victim, began)
		return ok, fmt.Sprintf("%+v", tl.restart)
	})
	return tl
}

// firstWrite starts a write through nodes every 200 ms, each through a new client (so no
// client's reconnection backoff is measured), until one is acknowledged; it sends that time.
func (c *cluster) firstWrite(ctx context.Context, key string, nodes ...string) <-chan time.Time {
	first := make(chan time.Time, 1)
	go func() {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var once sync.Once
		var wg sync.WaitGroup
		defer wg.Wait()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for attempt := 0; ; attempt++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cli, err := c.newEtcdClient(nodes...)
				if err != nil {
					return
				}
				defer cli.Close()
				pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
				defer pcancel()
				if _, err := cli.Put(pctx, fmt.Sprintf("%s/%d", key, attempt), "v"); err == nil {
					once.Do(func() { first <- time.Now(); cancel() })
				}
			}()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return first
}

// report prints p50 and max of the total and of each phase, in seconds; on the field's stack
// (field) without the phases of the layer's restart, which its logs date.
func report(b *testing.B, timelines []failoverTimeline, field bool) {
	layersRestart := []string{"fenced-to-write", "agent", "election"}
	phases := []struct {
		name string
		of   func(failoverTimeline) time.Duration
	}{
		{"total", func(t failoverTimeline) time.Duration { return t.written }},
		{"detection", func(t failoverTimeline) time.Duration { return t.detected }},
		{"fencing", func(t failoverTimeline) time.Duration { return t.fenced - t.detected }},
		{"fenced-to-write", failoverTimeline.fencedToWrite},
		{"agent", func(t failoverTimeline) time.Duration { return t.restart.agentsPart() }},
		{"election", func(t failoverTimeline) time.Duration { return t.restart.election() }},
		{"api-write", func(t failoverTimeline) time.Duration { return t.api.back }},
		{"api-after-etcd", func(t failoverTimeline) time.Duration { return t.api.back - t.written }},
		{"api-gap", func(t failoverTimeline) time.Duration { return t.apiGap }},
		{"readyz", func(t failoverTimeline) time.Duration { return t.api.readyz }},
	}
	for _, p := range phases {
		if field && slices.Contains(layersRestart, p.name) {
			continue
		}
		var d []time.Duration
		for _, t := range timelines {
			d = append(d, p.of(t))
		}
		reportP50Max(b, p.name, d)
	}
	var survivorRelists, victimRelists int
	for _, t := range timelines {
		survivorRelists += t.survivorRelists
		victimRelists += t.victimRelists
	}
	b.ReportMetric(float64(survivorRelists), "survivor-relists")
	b.ReportMetric(float64(victimRelists), "victim-relists")
	b.ReportMetric(float64(len(timelines)), "runs")
}

// reportP50Max reports the median and the maximum of d, in seconds, as NAME-p50-s and NAME-max-s.
func reportP50Max(b *testing.B, name string, d []time.Duration) {
	d = slices.Sorted(slices.Values(d))
	b.ReportMetric(d[(len(d)-1)/2].Seconds(), name+"-p50-s")
	b.ReportMetric(d[len(d)-1].Seconds(), name+"-max-s")
}

// runsFromEnv is the number of runs the variable asks for, 10 by default.
func runsFromEnv(b *testing.B, variable string) int {
	v := os.Getenv(variable)
	if v == "" {
		return 10
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", variable, v)
	}
	return n
}

// BenchmarkEtcdFault: etcd killed (SIGKILL) or frozen (SIGSTOP) under one node, or that node's
// kubelet killed, from the signal to the first write the other node's etcd acknowledges (a new
// client every 200 ms), the nodes taking turns as the victim. kube-apiserver runs on both nodes:
// a writer creates an object through the other node's API server every 100 ms and an informer
// watches through each (apiProbe); the API's first write after the signal, the longest gap
// between its writes until both serve again, and the relists are measured too. One cluster per
// fault; runs per fault: TNF_ETCDFAULT_RUNS (default 10).
func BenchmarkEtcdFault(b *testing.B) {
	benchProcessFaults(b, "TNF_ETCDFAULT_RUNS", upLayersAPICluster, etcdFaults())
}

// etcdFaults are BenchmarkEtcdFault's process faults: etcd killed or frozen, the kubelet killed.
func etcdFaults() []processFault {
	etcdSignal := func(name string, sig unix.Signal) processFault {
		return processFault{name, true,
			func(c *cluster, node string) int { return c.signalEtcd(etcdFault{node: node, sig: sig}) },
			func(c *cluster, node string, pid int) { c.waitEtcdReplaced(etcdFault{node: node, sig: sig}, pid) }}
	}
	return []processFault{
		etcdSignal("etcd-killed", unix.SIGKILL),
		etcdSignal("etcd-frozen", unix.SIGSTOP),
		{"kubelet-killed", false, func(c *cluster, node string) int {
			pid := c.standInPID(node, "kubelet")
			c.signal(node, pid, unix.SIGKILL)
			return pid
		}, (*cluster).waitKubeletReplaced},
	}
}

// benchProcessFaults runs each fault on a cluster of its own that up makes, as often as the
// variable runs says, the nodes taking turns as the victim.
func benchProcessFaults(b *testing.B, runsVariable string, up func(*testing.B) *cluster, faults []processFault) {
	runs := runsFromEnv(b, runsVariable)
	for _, fault := range faults {
		b.Run(fault.name+stackSuffix(b), func(b *testing.B) {
			c := up(b)
			var written, apiWritten, apiGaps []time.Duration
			relists := 0
			for i := range runs {
				victim, other := c.nodes[i%2], c.nodes[(i+1)%2]
				probe := c.probeAPI(fmt.Sprintf("%s-%d", fault.name, i), other)
				ctx, cancel := context.WithTimeout(context.Background(), settle)
				began := time.Now()
				pid := fault.signal(c, victim)
				// Writes start once the signal is sent: one sent earlier may still be acknowledged.
				first := c.firstWrite(ctx, fmt.Sprintf("bench/%s/%d", fault.name, i), other)
				fault.replaced(c, victim, pid)
				select {
				case at := <-first:
					written = append(written, at.Sub(began))
				case <-ctx.Done():
					b.Fatalf("run %d: %s took no write within %v", i+1, other, settle)
				}
				cancel()
				outage := c.apiOutage(probe, began)
				apiGap, apiRelists := c.finishAPIProbe(probe, began)
				apiWritten, apiGaps = append(apiWritten, outage.back), append(apiGaps, apiGap)
				relists += apiRelists[other]
				b.Logf("run %d: %s on %s; first write on %s after %v, through its API after %v; longest API gap %v, %d relists",
					i+1, fault.name, victim, other, written[i].Round(10*time.Millisecond), outage.back.Round(10*time.Millisecond),
					apiGap.Round(10*time.Millisecond), apiRelists[other])
			}
			reportP50Max(b, "first-write", written)
			if fault.interrupts {
				reportP50Max(b, "api-write", apiWritten)
			}
			reportP50Max(b, "api-gap", apiGaps)
			b.ReportMetric(float64(relists), "relists")
			b.ReportMetric(float64(c.fences("node1", "node1")+c.fences("node1", "node2")), "fencings")
			b.ReportMetric(float64(runs), "runs")
			c.reportDefects(b)
		})
	}
}

// processFault is a signal to one process of a node: signal sends it and returns the process's
// PID; replaced waits until the node runs another and both are Promoted again. A fault that
// does not interrupt writes has no outage to measure, only gaps (the API's "first write after
// the longest wait" would be any write).
type processFault struct {
	name       string
	interrupts bool
	signal     func(c *cluster, node string) int
	replaced   func(c *cluster, node string, pid int)
}
