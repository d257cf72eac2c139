//go:build integration

package cluster_test

import (
	"context"
	"os"
	"path/filepath"
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
