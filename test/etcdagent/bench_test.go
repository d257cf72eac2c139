//go:build integration

package etcdagent_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdagent"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

const benchRounds = 200

func percentile(d []time.Duration, p float64) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))]) / float64(time.Millisecond)
}

func timeIt(n int, f func()) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		began := time.Now()
		f()
		out[i] = time.Since(began)
	}
	return out
}

// BenchmarkMonitor: the promoted monitor on a healthy two-member cluster, run as Pacemaker runs
// it (a process: the entry point's fast path), beside the "shell path": the same member list,
// endpoint status and attribute calls made as separate etcdctl and crm_attribute processes
// (Pacemaker's real crm_attribute on an offline CIB file). The full agent's monitor, called
// in-process, shows what the work itself costs without any process start.
func BenchmarkMonitor(b *testing.B) {
	c := newCluster(b)
	leader, _ := formCluster(b, c)
	agent := timeIt(benchRounds, func() { leader.must("monitor", ocfPromoted) })
	env := ocf.MapEnv(leader.env(nil))
	inProcess := timeIt(benchRounds, func() {
		if st := etcdagent.Main([]string{"ocf-etcd", "monitor"}, env, io.Discard, io.Discard); st != ocfPromoted {
			b.Fatalf("in-process monitor: %v", st)
		}
	})

	cib := filepath.Join(c.dir, "cib.xml")
	empty, err := exec.Command("cibadmin", "--empty").Output()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cib, empty, 0o600); err != nil {
		b.Fatal(err)
	}
	shellEnv := append(os.Environ(), "CIB_file="+cib)
	sh := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = shellEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	sh("cibadmin", "--create", "--scope", "nodes", "--xml-text", `<node id="1" uname="node1"/>`)
	sh("cibadmin", "--create", "--scope", "nodes", "--xml-text", `<node id="2" uname="node2"/>`)
	sh("crm_attribute", "--node", "node2", "--name", "tnf-etcd-data", "--update", "0:0", "--lifetime", "forever")
	etcdctl := testbin.Path(b, "etcdctl")
	shell := timeIt(benchRounds, func() {
		sh(etcdctl, "--endpoints="+leader.url(), "member", "list")
		sh(etcdctl, "--endpoints="+leader.url(), "endpoint", "status")
		sh("crm_attribute", "--node", "node1", "--name", "tnf-etcd-data", "--update", "1:1", "--lifetime", "forever")
		sh("crm_attribute", "--node", "node2", "--name", "tnf-etcd-data", "--query", "--quiet", "--lifetime", "forever")
	})
	b.ReportMetric(percentile(agent, 0.5), "agent-p50-ms")
	b.ReportMetric(percentile(agent, 0.99), "agent-p99-ms")
	b.ReportMetric(percentile(shell, 0.5), "shell-p50-ms")
	b.ReportMetric(percentile(shell, 0.99), "shell-p99-ms")
	b.ReportMetric(percentile(agent, 0.5)/percentile(shell, 0.5), "agent/shell-p50")
	b.ReportMetric(percentile(inProcess, 0.5), "full-agent-in-process-p50-ms")
	b.ReportMetric(percentile(inProcess, 0.99), "full-agent-in-process-p99-ms")
	b.ReportMetric(percentile(inProcess, 0.5)/percentile(shell, 0.5), "full-agent-in-process/shell-p50")
}

// BenchmarkStartToPromoted: a cold pair with no data from the first start to both voters, and a
// node that rejoins a serving peer holding 2,000 keys, from its start to promoted.
func BenchmarkStartToPromoted(b *testing.B) {
	const runs = 5
	var cold, rejoin []time.Duration
	for i := 0; i < runs; i++ {
		c := newCluster(b)
		began := time.Now()
		leader, other := formCluster(b, c)
		cold = append(cold, time.Since(began))
		for k := 0; k < 2000; k++ {
			leader.put(fmt.Sprintf("/bench/%05d", k), "0123456789abcdef0123456789abcdef")
		}
		other.must("stop", ocfSuccess)
		leader.notify("stop", other.name)
		began = time.Now()
		other.must("start", ocfSuccess)
		catchUpAndPromote(b, other, leader)
		rejoin = append(rejoin, time.Since(began))
	}
	b.ReportMetric(percentile(cold, 0.5), "cold-pair-p50-ms")
	b.ReportMetric(percentile(cold, 1), "cold-pair-max-ms")
	b.ReportMetric(percentile(rejoin, 0.5), "rejoin-2000-keys-p50-ms")
	b.ReportMetric(percentile(rejoin, 1), "rejoin-2000-keys-max-ms")
}

// BenchmarkFailover: from the post-stop notification of a fenced peer to the first write
// acknowledged by the survivor.
func BenchmarkFailover(b *testing.B) {
	const runs = 5
	var took []time.Duration
	for i := 0; i < runs; i++ {
		c := newCluster(b)
		leader, other := formCluster(b, c)
		leader.put("/before", "x")
		leader.fence()
		began := time.Now()
		other.notify("stop", leader.name)
		other.put("/after", "y")
		took = append(took, time.Since(began))
	}
	b.ReportMetric(percentile(took, 0.5), "notify-to-write-p50-ms")
	b.ReportMetric(percentile(took, 1), "notify-to-write-max-ms")
}

// BenchmarkMonitorBusyCores: the promoted monitor, as Pacemaker runs it, while other work keeps
// every core busy: two busy-looping processes per core at etcd's and the agent's own priority,
// as a control-plane node's other processes may. The monitor runs every 10 s forever, and a
// status read past liveness_timeout (2 s) counts etcd frozen and recovers it, so its tail under
// load is what matters: the p99 should stay under 1 s, and no answer may be other than promoted.
func BenchmarkMonitorBusyCores(b *testing.B) {
	c := newCluster(b)
	leader, _ := formCluster(b, c)
	for range 2 * runtime.NumCPU() {
		busy := exec.Command("/bin/sh", "-c", "while :; do :; done")
		// Killed with this process too: a timeout's panic runs no cleanup.
		busy.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := busy.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = busy.Process.Kill()
			_ = busy.Wait()
		})
	}
	notPromoted := 0
	took := timeIt(benchRounds, func() {
		if code, out := leader.run("monitor", nil); code != ocfPromoted {
			notPromoted++
			b.Logf("monitor under load: exit %d\n%s", code, out)
		}
	})
	b.ReportMetric(percentile(took, 0.5), "agent-p50-ms")
	b.ReportMetric(percentile(took, 0.99), "agent-p99-ms")
	b.ReportMetric(percentile(took, 1), "agent-max-ms")
	b.ReportMetric(float64(notPromoted), "not-promoted")
}
