//go:build integration

package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/test/kubedata"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// BenchmarkGatherLargeData: tnfctl gather and tnfctl status on a serving node whose etcd holds
// the largest size of TNF_BENCH_DATA_GIB (kube-apiserver-shaped data, test/kubedata), with the
// operator's 8 GiB quota; three runs each, the slowest and the largest peak memory reported
// (tnfctl's, or that of the largest tool it ran).
// Neither reads the database: what they ask etcd (member list, endpoint status, metrics) does
// not grow with it, and every member of the bundle is bounded.
func BenchmarkGatherLargeData(b *testing.B) {
	sizes, err := kubedata.Sizes(os.Getenv("TNF_BENCH_DATA_GIB"))
	if err != nil {
		b.Fatal(err)
	}
	gib := slices.Max(sizes)
	b.Run(kubedata.SizeName(gib), func(b *testing.B) {
		// Pacemaker's daemons inherit the test's environment, and the agent's etcd the agent's.
		b.Setenv("ETCD_QUOTA_BACKEND_BYTES", "8589934592")
		c := newCluster(b, nil)
		c.up()
		shape, err := kubedata.Fill(context.Background(), c.etcdClient("node1"), c.etcdURL("node1"), int64(gib*(1<<30)))
		if err != nil {
			b.Fatalf("filling node1's etcd: %v", err)
		}
		b.Logf("filled: %+v", shape)
		b.ReportMetric(float64(shape.DbSize)/(1<<30), "db-gib")
		peak, err := testproc.NewPeakRSS(c.dir)
		if err != nil {
			b.Fatal(err)
		}
		peakOf := func() int64 {
			v, err := peak.Bytes()
			if err != nil {
				b.Fatal(err)
			}
			return v
		}
		var gatherTook, statusTook time.Duration
		var gatherRSS, statusRSS, bundle int64
		for i := range 3 {
			path := filepath.Join(c.dir, "gather-"+strconv.Itoa(i)+".tar.gz")
			began := time.Now()
			out, err := c.run("node1", peak.Wrap(c.tnfctlPath("node1"), "gather", "--file", path)...)
			if err != nil {
				b.Fatalf("tnfctl gather: %v\n%s", err, out)
			}
			gatherTook, gatherRSS = max(gatherTook, time.Since(began)), max(gatherRSS, peakOf())
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			bundle = max(bundle, fi.Size())

			began = time.Now()
			out, err = c.run("node1", peak.Wrap(c.tnfctlPath("node1"), "status")...)
			if err != nil {
				b.Fatalf("tnfctl status: %v\n%s", err, out)
			}
			statusTook, statusRSS = max(statusTook, time.Since(began)), max(statusRSS, peakOf())
		}
		b.ReportMetric(gatherTook.Seconds(), "gather-max-s")
		b.ReportMetric(float64(gatherRSS)/(1<<20), "gather-rss-max-mib")
		b.ReportMetric(float64(bundle)/(1<<20), "bundle-max-mib")
		b.ReportMetric(statusTook.Seconds(), "status-max-s")
		b.ReportMetric(float64(statusRSS)/(1<<20), "status-rss-max-mib")
	})
}

// BenchmarkRestoreLargeData: tnfctl restore on a pair serving kube-apiserver on both nodes, with
// each size of TNF_BENCH_RESTORE_GIB (make: RESTORE_GIB, 1 GiB; empty: kubedata's sizes) of
// kube-apiserver-shaped data (test/kubedata) in etcd and the operator's 8 GiB quota, from a
// snapshot etcdctl took of it, while an etcd client and an API client each write every 100 ms.
// Reported: from the command's start to the first API write after the outage (api-write-s), of
// which the checks of the snapshot and the cluster before
// anything stops (check-s); the outage, the longest time without an acknowledged API write
// (api-outage-s), of which the copy of the snapshot into the new data dir (copy-s), etcd's own
// start of the restored member (etcd-start-s, the agent's wait for it to serve), and the layer's
// part, the rest (layer-s: Pacemaker's stop and start of this node's instance, the agents'
// decisions, the restore's waits); the peer's join, learner to voter, with the whole database
// (join-s).
func BenchmarkRestoreLargeData(b *testing.B) {
	sizes, err := kubedata.Sizes(os.Getenv("TNF_BENCH_RESTORE_GIB"))
	if err != nil {
		b.Fatal(err)
	}
	for _, gib := range sizes {
		b.Run(kubedata.SizeName(gib), func(b *testing.B) {
			b.Setenv("ETCD_QUOTA_BACKEND_BYTES", "8589934592")
			c := newAPICluster(b, nil)
			c.upWithAPI()
			shape, err := kubedata.Fill(context.Background(), c.etcdClient("node1"), c.etcdURL("node1"), int64(gib*(1<<30)))
			if err != nil {
				b.Fatalf("filling node1's etcd: %v", err)
			}
			b.Logf("filled: %+v", shape)
			b.ReportMetric(float64(shape.DbSize)/(1<<30), "db-gib")
			snapshot := c.saveSnapshot("node1", "snapshot.db")
			etcdWrites := c.writing()
			apiWrites := c.startAPIWriter("restore", "node1")
			c.waitWrites(apiWrites.writer, "through node1's API")
			logFrom := c.agentLogSizes()
			began := time.Now()
			out, err := c.restore("node1", snapshot, "--yes")
			if err != nil {
				b.Fatalf("tnfctl restore: %v\n%s", err, out)
			}
			b.Logf("tnfctl restore (%v):\n%s", time.Since(began).Round(time.Millisecond), out)
			c.waitWrites(etcdWrites, "after the restore")
			c.waitWrites(apiWrites.writer, "after the restore, through node1's API")
			apiBack, _ := apiWrites.BackAfter(began)
			outage := apiWrites.LongestGap(began, apiBack)
			checked := restoreLineDuration(b, out, `the snapshot and the cluster checked in (\S+)$`)
			copied := restoreLineDuration(b, out, `the snapshot restored on node1 .* in (\S+)$`)
			joined := restoreLineDuration(b, out, `waited (\S+) for node2 to join the restored cluster`)
			started := restoredStartWait(b, readFile(c.pacemakerLog("node1"))[logFrom["node1"]:])
			b.ReportMetric(apiBack.Sub(began).Seconds(), "api-write-s")
			b.ReportMetric(checked.Seconds(), "check-s")
			b.ReportMetric(outage.Seconds(), "api-outage-s")
			b.ReportMetric(copied.Seconds(), "copy-s")
			b.ReportMetric(started.Seconds(), "etcd-start-s")
			b.ReportMetric((outage - copied - started).Seconds(), "layer-s")
			b.ReportMetric(joined.Seconds(), "join-s")
			etcdWrites.Stop()
			apiWrites.Stop()
		})
	}
}

// restoreLineDuration reads the duration the line of tnfctl restore's output that pattern
// matches gives.
func restoreLineDuration(b *testing.B, out, pattern string) time.Duration {
	b.Helper()
	m := regexp.MustCompile(`(?m)` + pattern).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no line of tnfctl restore's output matches %q", pattern)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// restoredStartWait is how long node1's agent waited for the restored member to serve, as it
// logged it (the last wait for a voter with a leader in log).
func restoredStartWait(b *testing.B, log string) time.Duration {
	b.Helper()
	m := regexp.MustCompile(`msg="waited for etcd" .*until="serve as a voter with a leader" waited=(\S+)`).FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		b.Fatal("node1's agent logged no wait for its restored member")
	}
	d, err := time.ParseDuration(m[len(m)-1][1])
	if err != nil {
		b.Fatal(err)
	}
	return d
}
