package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The README's figures are blocks generated from the page's rows, so that the figures users read
// first are a run's, never a hand copy; a test keeps the blocks equal to the page.
type block struct {
	name   string // "failover figures"
	render func([]row) string
}

var blocks = []block{{"failover figures", summary}, {"data size figures", dataSummary}}

func (b block) begin() string {
	return "<!-- " + b.name + ": generated from docs/benchmarks/make-bench.md by test/benchtable; do not edit -->"
}

func (b block) end() string { return "<!-- end of " + b.name + " -->" }

// summaryRow is one fault of the block: the benchmark that measured it, the metrics (without
// their -p50-s and -max-s) of how long writes were unavailable through the API and through etcd,
// and the metrics counting the informers' relists and the runs; field is the benchmark that
// measured the same fault on OpenShift's own stack (make bench-field) with the same metrics.
type summaryRow struct {
	fault, bench, api, etcd, relists, runs, field string
}

var summaryRows = []summaryRow{
	{"power cut of the race loser (the winner serves)", "ClusterFailover/race-loser-killed", "api-write", "total", "survivor-relists", "runs", "FieldFailover/race-loser-killed"},
	{"power cut of the race winner", "ClusterFailover/race-winner-killed", "api-write", "total", "survivor-relists", "runs", "FieldFailover/race-winner-killed"},
	{"cluster link cut", "ClusterFailover/network-split", "api-write", "total", "survivor-relists", "runs", "FieldFailover/network-split"},
	{"the race winner hangs, its power on", "ClusterFailover/race-winner-hangs", "api-write", "total", "survivor-relists", "runs", "FieldFailover/race-winner-hangs"},
	{"power cut of the race winner, its BMC answering in 3 s", "ClusterFailover/race-winner-killed-slow-bmc", "api-write", "total", "survivor-relists", "runs", "FieldFailover/race-winner-killed-slow-bmc"},
	{"planned reboot of the etcd leader's node", "PlannedReboot/graceful-leave-true", "leader-api-gap", "leader-gap", "staying-relists", "runs-per-role", "FieldPlannedReboot"},
	{"planned reboot of a follower's node", "PlannedReboot/graceful-leave-true", "follower-api-gap", "follower-gap", "staying-relists", "runs-per-role", "FieldPlannedReboot"},
	{"etcd killed on one node", "EtcdFault/etcd-killed", "api-write", "first-write", "relists", "runs", "FieldEtcdFault/etcd-killed"},
	{"etcd frozen on one node", "EtcdFault/etcd-frozen", "api-write", "first-write", "relists", "runs", "FieldEtcdFault/etcd-frozen"},
	{"kubelet killed on one node", "EtcdFault/kubelet-killed", "api-gap", "first-write", "relists", "runs", "FieldEtcdFault/kubelet-killed"},
}

// fieldDefects are the metrics by which the field's benchmarks count what the API's clients saw
// go wrong (test/cluster apiDefects), and how a cell says it.
var fieldDefects = []struct{ metric, what string }{
	{"lost", "acknowledged objects lost"},
	{"undelivered", "acknowledged objects an informer did not deliver within a minute"},
	{"stale-reads", "stale reads"},
	{"out-of-order", "watch events out of order"},
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
	// A cell of another run (the field's stack, the layer on another HA stack) carries that run:
	// each is made by a make target of its own, apart from the layer's benchmarks.
	other := func(s summaryRow, bench string) string {
		if r, ok := byKey[bench+" failed"]; ok {
			return fmt.Sprintf("**failed:** %s; %s, `%s`", r.value, r.at, r.commit)
		}
		r, ok := byKey[bench+" "+s.api+"-p50-s"]
		if !ok {
			return "not measured yet"
		}
		cell := fmt.Sprintf("API %s, etcd %s", seconds(bench, s.api), seconds(bench, s.etcd))
		// What went wrong is said in the cell: the layer's runs fail on any of it instead.
		for _, d := range fieldDefects {
			if n := count(bench, d.metric); n != "-" && n != "0" {
				cell += "; **" + n + " " + d.what + "**"
			}
		}
		return fmt.Sprintf("%s; %s runs, %s, `%s`", cell, count(bench, s.runs), r.at, r.commit)
	}
	b.WriteString("| fault | writes unavailable through the API, p50 / max | through etcd's own client | informer relists | runs | measured | " +
		"the same on Pacemaker 3.0 (Debian 13's HA stack) | OpenShift's stack on the same harness |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range summaryRows {
		measured := "-"
		if r, ok := byKey[s.bench+" "+s.api+"-p50-s"]; ok {
			measured = r.at + ", `" + r.commit + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", s.fault, seconds(s.bench, s.api), seconds(s.bench, s.etcd),
			count(s.bench, s.relists), count(s.bench, s.runs), measured, other(s, onPacemaker3(rows, s.bench)), other(s, s.field))
	}
	return b.String()
}

// onPacemaker3 is the name under which a run on Debian 13's HA stack measured bench: its name
// and the stack's Pacemaker version (test/cluster stackSuffix, make bench-failover PACEMAKER=3:
// "-pacemaker-3.0.0"), the page's last such where Debian's package moved on.
func onPacemaker3(rows []row, bench string) string {
	name := bench + "-pacemaker-3"
	for _, r := range rows {
		if strings.HasPrefix(r.bench, bench+"-pacemaker-3.") {
			name = r.bench
		}
	}
	return name
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

// withSummary is text (the README) with each block replaced by its rendering of rows.
func withSummary(text string, rows []row) (string, error) {
	for _, b := range blocks {
		before, rest, ok1 := strings.Cut(text, b.begin()+"\n")
		_, after, ok2 := strings.Cut(rest, b.end())
		if !ok1 || !ok2 {
			return "", fmt.Errorf("no %q … %q block", b.begin(), b.end())
		}
		text = before + b.begin() + "\n" + b.render(rows) + b.end() + after
	}
	return text, nil
}

// restorePrefix marks, in the large-data table's keys, BenchmarkRestoreLargeData's metrics
// (test/cluster), measured on a run of their own.
const restorePrefix = "restore-"

// dataSummary is the large-data table: a row per database size BenchmarkLargeData or
// BenchmarkRestoreLargeData measured, smallest first; nothing before the first run.
func dataSummary(rows []row) string {
	byKey := map[string]row{}
	var sizes []string
	for _, r := range rows {
		// Only the plain sizes ("0.5GiB"): a variant of the rig ("2GiB-joiner-on-tmpfs") has its
		// rows on the page alone.
		bench, size, _ := strings.Cut(r.bench, "/")
		prefix := map[string]string{"LargeData": "", "RestoreLargeData": restorePrefix}
		p, ok := prefix[bench]
		if !ok || gibOf(size) == 0 {
			continue
		}
		if !slices.Contains(sizes, size) {
			sizes = append(sizes, size)
		}
		byKey[size+" "+p+r.metric] = r
	}
	if len(sizes) == 0 {
		return ""
	}
	slices.SortFunc(sizes, func(a, b string) int { return cmp.Compare(gibOf(a), gibOf(b)) })
	value := func(size, metric, format string) string {
		r, ok := byKey[size+" "+metric]
		if !ok {
			return "-"
		}
		f, err := strconv.ParseFloat(r.value, 64)
		if err != nil {
			return r.value
		}
		return fmt.Sprintf(format, f)
	}
	var b strings.Builder
	b.WriteString("| database | rejoin after a planned reboot / after fencing (agent's part) | streamed to it | survivor's write p99: idle / during each rejoin | power cut → first write | cold boot → first write / both voters | restore → first API write (the layer's part) | peak memory: etcd / agent | measured |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, size := range sizes {
		v := func(metric, format string) string { return value(size, metric, format) }
		measured := "-"
		if r, ok := byKey[size+" db-gib"]; ok {
			measured = r.at + ", `" + r.commit + "`"
		}
		db := v("db-gib", "%.2f")
		if db == "-" {
			db = v(restorePrefix+"db-gib", "%.2f")
		}
		restore := v(restorePrefix+"api-write-s", "%.1f s") + " (" + v(restorePrefix+"layer-s", "%.1f s") + ")"
		if r, ok := byKey[size+" "+restorePrefix+"api-write-s"]; ok && r.at+", `"+r.commit+"`" != measured {
			restore += ", " + r.at + ", `" + r.commit + "`"
		}
		fmt.Fprintf(&b, "| %s GiB | %s (%s) / %s (%s) | %s GiB | %s / %s / %s ms | %s | %s / %s | %s | %s / %s MiB | %s |\n",
			db,
			v("planned-rejoin-s", "%.1f s"), v("planned-agent-s", "%.2f s"), v("fenced-rejoin-s", "%.1f s"), v("fenced-agent-s", "%.2f s"),
			v("planned-moved-gib", "%.2f"),
			v("idle-write-p99-ms", "%.1f"), v("planned-write-p99-ms", "%.1f"), v("fenced-write-p99-ms", "%.1f"),
			v("failover-s", "%.1f s"),
			v("cold-first-write-s", "%.1f s"), v("cold-both-voters-s", "%.1f s"),
			restore,
			v("etcd-rss-max-mib", "%.0f"), v("agent-rss-max-mib", "%.0f"),
			measured)
	}
	return b.String()
}

// gibOf reads a sub-benchmark's size, "0.5GiB"; 0 for any other name.
func gibOf(size string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSuffix(size, "GiB"), 64)
	if err != nil {
		return 0
	}
	return f
}
