//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
)

// BenchmarkPlannedReboot: the write unavailability a client of both members sees while one
// node reboots cleanly: the longest gap between acknowledged writes, a new write attempted every
// 50 ms (each with a 1 s deadline), from the shutdown until both are Promoted again. Each node
// reboots in turn, alternately while its member leads and while it follows; runs per role:
// TNF_PLANNED_RUNS (default 10). Once with graceful leave (the default) and once with
// graceful_leave=false, each on its own cluster in the same run; forced clusters are counted
// from the agents' logs. kube-apiserver runs on both nodes: through each reboot a writer creates
// an object through the other node's API server every 100 ms and an informer watches through
// each (apiProbe); the longest gap between its acknowledged writes, until both API servers serve
// again, and the relists of the informer through the node that stayed up are measured too.
func BenchmarkPlannedReboot(b *testing.B) {
	runs := runsFromEnv(b, "TNF_PLANNED_RUNS")
	for _, leave := range []string{"true", "false"} {
		b.Run("graceful-leave-"+leave+stackSuffix(b), func(b *testing.B) {
			c := newAPICluster(b, func(cfg *clusterconfig.Config) { cfg.Resources.Etcd["graceful_leave"] = leave })
			c.upWithAPI()
			benchPlannedReboots(b, c, runs)
			b.ReportMetric(float64(strings.Count(c.agentLogs(), "forcing a new cluster of one")), "forced-clusters")
		})
	}
}

// benchPlannedReboots reboots each node of c, both serving, in turn, runs times in each role,
// and reports the gaps, the relists and the fencings.
func benchPlannedReboots(b *testing.B, c *cluster, runs int) {
	w := &writer{etcdcheck.Start(etcdcheck.PutThrough(c.etcdClient(c.nodes...)), 50*time.Millisecond, time.Second)}
	defer w.Stop()
	c.waitWrites(w, "both up")
	gaps, apiGaps := map[string][]time.Duration{}, map[string][]time.Duration{}
	relists := 0
	for i := range 2 * runs {
		// Each node in turn, each role in turn: node1 leading, node2 following, node1
		// following, node2 leading, …
		node, role := c.nodes[i%2], []string{"leader", "follower"}[(i/2+i)%2]
		c.makeRole(node, role)
		probe := c.probeAPI(fmt.Sprintf("reboot-%d", i), c.other(node))
		began := time.Now()
		gaps[role] = append(gaps[role], c.reboot(w, node))
		apiGap, apiRelists := c.finishAPIProbe(probe, began)
		apiGaps[role] = append(apiGaps[role], apiGap)
		relists += apiRelists[c.other(node)]
		b.Logf("reboot %d of %s (%s): longest API write gap %v, %d relists through %s",
			i+1, node, role, apiGap.Round(time.Millisecond), apiRelists[c.other(node)], c.other(node))
	}
	for _, role := range []string{"leader", "follower"} {
		reportP50Max(b, role+"-gap", gaps[role])
		reportP50Max(b, role+"-api-gap", apiGaps[role])
	}
	b.ReportMetric(float64(relists), "staying-relists")
	b.ReportMetric(float64(c.fences("node1", "node1")+c.fences("node1", "node2")), "fencings")
	b.ReportMetric(float64(runs), "runs-per-role")
	c.reportDefects(b)
}

// BenchmarkBothCrash: both nodes lose power at once and are powered on again together; from the
// power-on to the first write the cluster acknowledges (a new client every 200 ms), and to both
// Promoted. Runs: TNF_BOTHCRASH_RUNS (default 10), on one cluster.
func BenchmarkBothCrash(b *testing.B) {
	runs := runsFromEnv(b, "TNF_BOTHCRASH_RUNS")
	c := newCluster(b, nil)
	c.up()
	var written, promoted []time.Duration
	for i := range runs {
		c.crashBoth()
		ctx, cancel := context.WithTimeout(context.Background(), settle)
		began := time.Now()
		c.both("on")
		first := c.firstWrite(ctx, fmt.Sprintf("bench/both-crash/%d", i), c.nodes...)
		c.waitRoles("node1", bothPromoted)
		promoted = append(promoted, time.Since(began))
		select {
		case at := <-first:
			written = append(written, at.Sub(began))
		case <-ctx.Done():
			b.Fatalf("run %d: no write acknowledged within %v", i+1, settle)
		}
		cancel()
		b.Logf("run %d: first write %v, both promoted %v", i+1, written[i].Round(100*time.Millisecond), promoted[i].Round(time.Second))
	}
	reportP50Max(b, "first-write", written)
	reportP50Max(b, "both-promoted", promoted)
	b.ReportMetric(float64(runs), "runs")
}
