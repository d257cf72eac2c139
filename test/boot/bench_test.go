//go:build boot

package boot_test

import (
	"testing"
	"time"

	"github.com/stmcginnis/gofish/redfish"
)

// BenchmarkBoot: on real systemd boots under TCG on this machine, both machines powered on at
// once to two voting etcd members (boot, first-boot setup, the cluster configuration's pcs
// commands, etcd formed and promoted), then node 2's power cut to the first write node 1's etcd
// acknowledges alone. One run: each takes minutes. The writer tries every 500 ms, so the
// failover is known to about 0.5 s; the cold boot is polled every 3 s.
func BenchmarkBoot(b *testing.B) {
	l := newLab(b, image.disk)
	began := time.Now()
	for _, n := range nodeNames {
		l.power(n, redfish.OnResetType)
	}
	for _, n := range nodeNames {
		l.waitBooted(n)
	}
	booted := time.Since(began)
	l.waitRoles("node1", map[string]string{"node1": "Promoted", "node2": "Promoted"})
	l.voters("node1", 2)
	formed := time.Since(began)
	w := l.startWriter()
	l.waitWrites(w, "both up")

	fault := time.Now()
	l.power("node2", redfish.ForceOffResetType)
	l.waitFenced("node1", "node2", 1)
	fenced := time.Since(fault)
	l.waitWrites(w, "node1 alone")
	written, _ := w.FirstAckAfter(fault.Add(ackSettle))
	w.Stop()
	b.ReportMetric(booted.Seconds(), "both-booted-s")
	b.ReportMetric(formed.Seconds(), "cold-boot-to-2-voters-s")
	b.ReportMetric(fenced.Seconds(), "power-cut-to-fenced-s")
	b.ReportMetric(written.Sub(fault).Seconds(), "power-cut-to-first-write-s")
}

// BenchmarkBootRollingUpdate: the rolling update of TestRollingUpdate under TCG, per node: its
// clean stop, the time from the stop to both Promoted again (stop, OS switch, boot, rejoin,
// promotion) and the longest gap between two acknowledged writes meanwhile (the writer tries
// every 500 ms).
func BenchmarkBootRollingUpdate(b *testing.B) {
	rollingUpdate(b, func(node string, stop, back, gap time.Duration) {
		b.ReportMetric(stop.Seconds(), node+"-clean-stop-s")
		b.ReportMetric(back.Seconds(), node+"-stop-to-both-promoted-s")
		b.ReportMetric(gap.Seconds(), node+"-longest-write-gap-s")
	})
}
