//go:build integration

package etcdagent_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/procfs"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
	"github.com/tnf-layer/tnf-layer/test/kubedata"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// BenchmarkLargeData: a pair filled with kube-apiserver-shaped data (test/kubedata) to each
// size of TNF_BENCH_DATA_GIB (GiB of etcd's database file; make bench: DATA_GIB), with the
// operator's etcd settings that matter for size (8 GiB quota, snapshot count 10000) and the pcs
// template's start and promote timeouts, through:
//   - planned: a planned reboot's return (graceful stop, start, learner, promoted);
//   - fenced: a power cut, the survivor's first write, and the fenced node's return;
//   - cold: both nodes powered off, started together, the first write and both voters;
//
// while a writer on the serving node writes 100 small objects a second (idle: the same for 15 s
// with nothing else going on). agent-s is the agent's own part of a rejoin: its start, promote
// and notify actions on both nodes without their waits for etcd (agent-waited-s, which they
// log); the rest of rejoin-s is etcd's catch-up, seen by monitors every 100 ms (Pacemaker's
// unpromoted monitor runs every 11 s: up to 11 s more on a node).
func BenchmarkLargeData(b *testing.B) {
	sizes, err := kubedata.Sizes(os.Getenv("TNF_BENCH_DATA_GIB"))
	if err != nil {
		b.Fatal(err)
	}
	secondDisk := os.Getenv("TNF_BENCH_SECOND_DISK") != ""
	for _, gib := range sizes {
		name := kubedata.SizeName(gib)
		if secondDisk {
			name += "-joiner-on-tmpfs"
		}
		b.Run(name, func(b *testing.B) {
			benchLargeData(b, int64(gib*(1<<30)), secondDisk)
		})
	}
}

const gib = float64(1 << 30)

// benchLargeData runs the phases at one size. With secondDisk the joining node (node2, which
// loses every tie) keeps its data on a tmpfs of its own: on one machine both nodes otherwise
// share a disk, and the joiner's writes slow the survivor's log syncs as two machines would not
// (TNF_BENCH_SECOND_DISK; the tmpfs takes five times the size in memory).
func benchLargeData(b *testing.B, target int64, secondDisk bool) {
	c := newCluster(b)
	c.catchUp = 10 * time.Minute
	for _, n := range c.nodes {
		n.environ = map[string]string{
			"ETCD_QUOTA_BACKEND_BYTES":    "8589934592",
			"ETCD_SNAPSHOT_COUNT":         "10000",
			"OCF_RESKEY_CRM_meta_timeout": "300000",
		}
		peak, err := testproc.NewPeakRSS(c.dir)
		if err != nil {
			b.Fatal(err)
		}
		n.peak = &peak
	}
	if secondDisk {
		joiner := c.nodes["node2"]
		disk := filepath.Join(joiner.dir, "disk")
		if err := os.MkdirAll(disk, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := unix.Mount("tmpfs", disk, "tmpfs", 0, fmt.Sprintf("size=%d", 5*target)); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = unix.Unmount(disk, unix.MNT_DETACH) })
		joiner.params["data_dir"] = filepath.Join(disk, "etcd")
	}
	leader, other := formCluster(b, c)
	shape, err := kubedata.Fill(context.Background(), leader.client(), leader.url(), target)
	if err != nil {
		b.Fatalf("filling through %s: %v", leader.name, err)
	}
	b.Logf("filled: %+v", shape)
	b.ReportMetric(float64(shape.DbSize)/gib, "db-gib")
	b.ReportMetric(float64(shape.InUse)/gib, "db-in-use-gib")
	b.ReportMetric(float64(shape.Objects), "objects")
	b.ReportMetric(shape.Took.Seconds(), "fill-s")
	otherCli := other.client()
	untilFor(b, c.catchUp, other.name+" applied the fill", func() bool {
		return other.status(otherCli).Header.Revision >= shape.Revision
	})
	// Memory from here on: the fill writes faster than a cluster does.
	ranBefore := map[*node]int{}
	for _, n := range c.nodes {
		resetPeakRSS(b, n.pid())
		resetPeakRSS(b, n.pidOf("watcher.pid"))
		ranBefore[n] = len(n.ran)
	}
	mem := watchMemory(c)
	defer mem.stop()

	w := startWriter(b, leader)
	time.Sleep(15 * time.Second)
	w.report(b, "idle", w.stop())

	// A planned reboot of the node that did not lead: it leaves, its peer serves alone.
	other.must("stop", ocfSuccess)
	leader.notify("stop", other.name)
	rejoin(b, "planned", other, leader)

	// A power cut of the same node: etcd lost its quorum until the survivor forced a cluster.
	other.fence()
	first := firstWrite(b, leader)
	leader.notify("stop", other.name)
	b.ReportMetric(first().Seconds(), "failover-s")
	forced := leader.ran[len(leader.ran)-1]
	b.ReportMetric((forced.took - forced.waited).Seconds(), "failover-agent-s")
	rejoin(b, "fenced", other, leader)

	// The site's power cut and return: both start in one transition, and both start their
	// members (both are voters of the two of them).
	ids := memberIDs(b, leader)
	leader.fence()
	other.fence()
	first = firstWrite(b, leader, other)
	began := time.Now()
	startBoth(b, leader, other)
	promoteBothMembers(b, c, ids, false)
	b.ReportMetric(first().Seconds(), "cold-first-write-s")
	b.ReportMetric(time.Since(began).Seconds(), "cold-both-voters-s")
	b.ReportMetric(float64(max(peerBytes(b, leader), peerBytes(b, other)))/gib, "cold-moved-gib")

	peaks := mem.stop()
	b.ReportMetric(float64(peaks.etcd)/(1<<20), "etcd-rss-max-mib")
	b.ReportMetric(float64(peaks.watcher)/(1<<20), "watcher-rss-max-mib")
	var action actionRun
	for _, n := range c.nodes {
		for _, r := range n.ran[ranBefore[n]:] {
			if r.maxRSS > action.maxRSS {
				action = r
			}
		}
	}
	b.Logf("largest agent action: %s, %d MiB", action.action, action.maxRSS>>20)
	b.ReportMetric(float64(action.maxRSS)/(1<<20), "agent-rss-max-mib")
}

// rejoin starts learner (stopped or fenced) beside the serving voter and times it until both
// are voters and notified, the agent's part of that, the bytes etcd streamed to it and the
// latency of a writer through the voter meanwhile.
func rejoin(b *testing.B, phase string, learner, voter *node) {
	b.Helper()
	w := startWriter(b, voter)
	ranBefore := map[*node]int{learner: len(learner.ran), voter: len(voter.ran)}
	began := time.Now()
	learner.must("start", ocfSuccess)
	catchUpAndPromote(b, learner, voter)
	took := time.Since(began)
	moved := peerBytes(b, learner)
	w.report(b, phase, w.stop())
	var agent, waited time.Duration
	for n, from := range ranBefore {
		for _, r := range n.ran[from:] {
			if r.action != "monitor" {
				agent += r.took - r.waited
				waited += r.waited
			}
		}
	}
	b.ReportMetric(waited.Seconds(), phase+"-agent-waited-s")
	b.ReportMetric(took.Seconds(), phase+"-rejoin-s")
	b.ReportMetric(agent.Seconds(), phase+"-agent-s")
	b.ReportMetric(float64(moved)/gib, phase+"-moved-gib")
}

// firstWrite starts writing through any of nodes (etcdcheck's writer: a write every 100 ms,
// each for up to 1 s); the function it returns waits for the first acknowledged one (5 minutes
// at most), stops the writes and says how long after the call that one was acknowledged.
func firstWrite(b *testing.B, nodes ...*node) func() time.Duration {
	b.Helper()
	var endpoints []string
	for _, n := range nodes {
		endpoints = append(endpoints, n.url())
	}
	// gRPC's default reconnection backoff (1 s growing to 2 min) would see the first write late.
	fast := grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: time.Second,
		Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1, MaxDelay: 100 * time.Millisecond}})
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: time.Second, Logger: zap.NewNop(),
		TLS: nodes[0].clientTLS(), DialOptions: []grpc.DialOption{fast}})
	if err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	w := etcdcheck.Start(etcdcheck.PutThrough(cli), 100*time.Millisecond, time.Second)
	return func() time.Duration {
		defer cli.Close()
		defer w.Stop()
		var acked time.Time
		untilFor(b, 5*time.Minute, fmt.Sprintf("a write through %v", endpoints), func() bool {
			var ok bool
			acked, ok = w.FirstAckAfter(began)
			return ok
		})
		return acked.Sub(began)
	}
}

// peerBytes is what n's etcd received from its peers since it started, snapshots included:
// every rejoin starts a new etcd process.
func peerBytes(b *testing.B, n *node) int64 {
	b.Helper()
	resp, err := http.Get(n.url() + "/metrics")
	if err != nil {
		b.Fatalf("metrics of %s: %v", n.name, err)
	}
	defer resp.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatalf("metrics of %s: %v", n.name, err)
	}
	var sum float64
	if f := families["etcd_network_peer_received_bytes_total"]; f != nil {
		for _, m := range f.Metric {
			sum += m.GetCounter().GetValue()
		}
	}
	return int64(sum)
}

// writer writes small objects through one node at writesPerSecond, the way kube-apiserver's
// steady updates (leases, status) reach etcd. Each client keeps its own schedule, and a write's
// latency counts from when it was due: a stall delays the writes queued behind it too, as it
// delays a cluster's clients.
type writer struct {
	done    chan struct{}
	stopped sync.WaitGroup
	mu      sync.Mutex
	took    []time.Duration
	failed  int
}

const (
	writesPerSecond = 100
	writerClients   = 4
)

func startWriter(b *testing.B, n *node) *writer {
	w := &writer{done: make(chan struct{})}
	value := strings.Repeat("v", 2<<10)
	every := time.Second * writerClients / writesPerSecond
	for i := range writerClients {
		cli := n.client()
		w.stopped.Add(1)
		go func() {
			defer w.stopped.Done()
			defer cli.Close()
			due := time.Now()
			for k := 0; ; k++ {
				due = due.Add(every)
				select {
				case <-w.done:
					return
				case <-time.After(time.Until(due)):
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := cli.Put(ctx, fmt.Sprintf("/kubernetes.io/leases/bench/writer-%d-%d", i, k%100), value)
				took := time.Since(due)
				cancel()
				w.mu.Lock()
				if err != nil {
					w.failed++
				} else {
					w.took = append(w.took, took)
				}
				w.mu.Unlock()
			}
		}()
	}
	return w
}

// stop ends the writes and returns their latencies.
func (w *writer) stop() []time.Duration {
	close(w.done)
	w.stopped.Wait()
	return w.took
}

func (w *writer) report(b *testing.B, phase string, took []time.Duration) {
	b.Helper()
	if len(took) == 0 {
		b.Fatalf("%s: no write succeeded (%d failed)", phase, w.failed)
	}
	b.ReportMetric(percentile(took, 0.5), phase+"-write-p50-ms")
	b.ReportMetric(percentile(took, 0.99), phase+"-write-p99-ms")
	b.ReportMetric(percentile(took, 1), phase+"-write-max-ms")
	b.ReportMetric(float64(w.failed), phase+"-write-failures")
}

// memoryWatch samples the peak resident memory (VmHWM) of both nodes' etcd and watcher
// processes every 200 ms; a process's peak is kept when it exits between two samples but
// not its last 200 ms.
type memoryWatch struct {
	done    chan struct{}
	stopped chan struct{}
	peaks   memoryPeaks
}

type memoryPeaks struct{ etcd, watcher uint64 }

func watchMemory(c *cluster) *memoryWatch {
	m := &memoryWatch{done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(m.stopped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, n := range c.nodes {
				m.peaks.etcd = max(m.peaks.etcd, peakRSS(n.pidOf("etcd.pid")))
				m.peaks.watcher = max(m.peaks.watcher, peakRSS(n.pidOf("watcher.pid")))
			}
			select {
			case <-m.done:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// stop ends the sampling (again: no-op) and returns the peaks.
func (m *memoryWatch) stop() memoryPeaks {
	select {
	case <-m.done:
	default:
		close(m.done)
	}
	<-m.stopped
	return m.peaks
}

// resetPeakRSS sets the process's peak resident memory to its current one (proc(5), clear_refs).
func resetPeakRSS(b *testing.B, pid int) {
	b.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Fatal(err)
	}
}

// peakRSS is the peak resident memory (VmHWM) of pid, 0 when it is gone.
func peakRSS(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return st.VmHWM
}
