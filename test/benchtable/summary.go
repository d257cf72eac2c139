package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The README's failover figures are a block generated from the page's rows, so that the figures
// users read first are a run's, never a hand copy; a test keeps the block equal to the page.
const (
	summaryBegin = "<!-- failover figures: generated from docs/benchmarks/make-bench.md by test/benchtable; do not edit -->"
	summaryEnd   = "<!-- end of failover figures -->"
)

// summaryRow is one fault of the block: the benchmark that measured it, the metrics (without
// their -p50-s and -max-s) of how long writes were unavailable through the API and through etcd,
// and the metrics counting the informers' relists and the runs.
type summaryRow struct {
	fault, bench, api, etcd, relists, runs string
}

var summaryRows = []summaryRow{
	{"power cut of the race loser (the winner serves)", "ClusterFailover/race-loser-killed", "api-write", "total", "survivor-relists", "runs"},
	{"power cut of the race winner", "ClusterFailover/race-winner-killed", "api-write", "total", "survivor-relists", "runs"},
	{"cluster link cut", "ClusterFailover/network-split", "api-write", "total", "survivor-relists", "runs"},
	{"the race winner hangs, its power on", "ClusterFailover/race-winner-hangs", "api-write", "total", "survivor-relists", "runs"},
	{"power cut of the race winner, its BMC answering in 3 s", "ClusterFailover/race-winner-killed-slow-bmc", "api-write", "total", "survivor-relists", "runs"},
	{"planned reboot of the etcd leader's node", "PlannedReboot/graceful-leave-true", "leader-api-gap", "leader-gap", "staying-relists", "runs-per-role"},
	{"planned reboot of a follower's node", "PlannedReboot/graceful-leave-true", "follower-api-gap", "follower-gap", "staying-relists", "runs-per-role"},
	{"etcd killed on one node", "EtcdFault/etcd-killed", "api-write", "first-write", "relists", "runs"},
	{"etcd frozen on one node", "EtcdFault/etcd-frozen", "api-write", "first-write", "relists", "runs"},
	{"kubelet killed on one node", "EtcdFault/kubelet-killed", "api-gap", "first-write", "relists", "runs"},
}

// summary is the block's table, from the page's rows.
func summary(rows []row) string {
	byKey := map[string]row{}
	for _, r := range rows {
		byKey[r.bench+" "+r.metric] = r
	}
	seconds := func(bench, metric string) string {
		p50, ok1 := byKey[bench+" "+metric+"-p50-s"]
		worst, ok2 := byKey[bench+" "+metric+"-max-s"]
		if !ok1 || !ok2 {
			return "not measured yet"
		}
		return formatSeconds(p50.value) + " / " + formatSeconds(worst.value)
	}
	count := func(bench, metric string) string {
		r, ok := byKey[bench+" "+metric]
		if !ok {
			return "-"
		}
		// go test reports every metric as a float: a count reads as one.
		if f, err := strconv.ParseFloat(r.value, 64); err == nil && f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10)
		}
		return r.value
	}
	var b strings.Builder
	b.WriteString("| fault | writes unavailable through the API, p50 / max | through etcd's own client | informer relists | runs | measured |\n" +
		"| --- | --- | --- | --- | --- | --- |\n")
	for _, s := range summaryRows {
		measured := "-"
		if r, ok := byKey[s.bench+" "+s.api+"-p50-s"]; ok {
			measured = r.at + ", `" + r.commit + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", s.fault, seconds(s.bench, s.api), seconds(s.bench, s.etcd),
			count(s.bench, s.relists), count(s.bench, s.runs), measured)
	}
	return b.String()
}

// formatSeconds writes a benchmark's seconds as a person reads them: tenths, hundredths below 1 s.
func formatSeconds(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil:
		return v
	case f < 1:
		return fmt.Sprintf("%.2f s", f)
	}
	return fmt.Sprintf("%.1f s", f)
}

// withSummary is text (the README) with its block replaced by the summary of rows.
func withSummary(text string, rows []row) (string, error) {
	before, rest, ok1 := strings.Cut(text, summaryBegin+"\n")
	_, after, ok2 := strings.Cut(rest, summaryEnd)
	if !ok1 || !ok2 {
		return "", fmt.Errorf("no %q … %q block", summaryBegin, summaryEnd)
	}
	return before + summaryBegin + "\n" + summary(rows) + summaryEnd + after, nil
}
