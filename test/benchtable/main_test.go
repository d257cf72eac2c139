package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	out := `goos: linux
BenchmarkMonitor-2   	       1	  123 ns/op	         6.2 p50-ms	         8.6 p99-ms
PASS
`
	rows, failures, failed, err := parse(strings.NewReader(out))
	if err != nil || len(failed) != 0 || len(failures) != 0 || len(rows) != 2 || rows[0] != (row{bench: "Monitor", metric: "p50-ms", value: "6.2"}) {
		t.Fatalf("rows %v, failures %v, failed %v, %v", rows, failures, failed, err)
	}
	_, failures, failed, _ = parse(strings.NewReader("--- FAIL: BenchmarkX\n    x_test.go:1: boom\nFAIL\n"))
	if len(failed) != 1 || len(failures) != 3 {
		t.Errorf("a failed run: failed %v, failures %v", failed, failures)
	}
}

// TestFailedRows: with -keep-failed a failed sub-benchmark gets a row with the reason the cluster
// harness gave, its parent none, and the benchmarks that passed keep theirs.
func TestFailedRows(t *testing.T) {
	out := `    x_test.go:9: node1: power off
    cluster_test.go:521: BenchmarkField/a FAILED:
          node1's informer | delivered 26 objects: not within 1m0s
--- FAIL: BenchmarkField/a
BenchmarkField/b-2   	       1	  123 ns/op	         6.2 total-p50-s
--- FAIL: BenchmarkField
FAIL
`
	rows, _, failed, err := parse(strings.NewReader(out))
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	got := failedRows(failed)
	want := []row{{bench: "Field/a", metric: "failed", value: "node1's informer / delivered 26 objects: not within 1m0s"}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("failed rows %v, want %v", got, want)
	}
}

// TestPageMerge: a run replaces the rows of the benchmarks it ran, with its date and commit, and
// keeps the others with theirs; a page row that cannot be read is an error naming its line.
func TestPageMerge(t *testing.T) {
	page := filepath.Join(t.TempDir(), "make-bench.md")
	first := []row{{bench: "Monitor", metric: "p50-ms", value: "6.2"}, {bench: "Failover/a", metric: "p50-s", value: "9"}, {bench: "Failover/a", metric: "max-s", value: "11"}}
	if err := writePage(page, "make bench", "abc1234", first, time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	again := []row{{bench: "Failover/a", metric: "p50-s", value: "8"}, {bench: "Failover/b", metric: "p50-s", value: "12"}}
	if err := writePage(page, "make bench", "def5678", again, time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(page)
	got, err := pageRows(string(data), page)
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{"Monitor", "p50-ms", "6.2", "2026-11-26 07:00", "abc1234", got[0].cpus},
		{"Failover/a", "p50-s", "8", "2026-11-27 09:30", "def5678", got[0].cpus},
		{"Failover/b", "p50-s", "12", "2026-11-27 09:30", "def5678", got[0].cpus},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(string(data), "# make bench: the latest figures") {
		t.Errorf("page:\n%s", data)
	}
	if err := os.WriteFile(page, []byte(tableHeader+"| `Monitor` | p50-ms | 6.2 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writePage(page, "make bench", "x", again, time.Now()); err == nil || !strings.Contains(err.Error(), page+":3: want 6 columns") {
		t.Errorf("a short row: %v", err)
	}
}

// shippedRows are the rows of the repository's page, docs/benchmarks/make-bench.md.
func shippedRows(t *testing.T) []row {
	t.Helper()
	page, err := os.ReadFile("../../docs/benchmarks/make-bench.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pageRows(string(page), "make-bench.md")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestReadmeFiguresAreThePages: README's blocks of figures are the ones the page generates, each
// from a run of a committed tree (a "-dirty" commit names no tree a reader can check out).
func TestReadmeFiguresAreThePages(t *testing.T) {
	rows := shippedRows(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := withSummary(string(readme), rows)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if string(readme) != want {
		t.Errorf("README.md's figures differ from the page's; regenerate them: go run ./test/benchtable -summary README.md -markdown docs/benchmarks/make-bench.md </dev/null")
	}
	for i, line := range strings.Split(string(readme), "\n") {
		if strings.Contains(line, "-dirty`") {
			t.Errorf("README.md:%d: a figure from a tree with uncommitted changes; run its benchmark again on a commit", i+1)
		}
	}
}

// TestSummary: a fault's figures come from its benchmark's rows, in seconds as people read them,
// with the run that measured them; the field's cell and the Pacemaker 3 cell carry their own
// runs; a fault not measured says so.
func TestSummary(t *testing.T) {
	rows := []row{
		{"ClusterFailover/race-loser-killed", "api-write-p50-s", "9.912", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "api-write-max-s", "11.03", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "total-p50-s", "9.8", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "total-max-s", "10.97", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "survivor-relists", "0", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "runs", "10.00", "2026-11-27 04:00", "abc1234", "2"},
		{"FieldFailover/race-loser-killed", "api-write-p50-s", "61.04", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "api-write-max-s", "70.2", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "total-p50-s", "60.9", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "total-max-s", "70.14", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "runs", "3.00", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "lost", "0.00", "2026-11-28 22:00", "def5678", "2"},
		{"FieldFailover/race-loser-killed", "undelivered", "15.00", "2026-11-28 22:00", "def5678", "2"},
		{"ClusterFailover/race-loser-killed-pacemaker-3.0.0", "api-write-p50-s", "8.81", "2026-11-29 16:00", "0123abc", "2"},
		{"ClusterFailover/race-loser-killed-pacemaker-3.0.0", "api-write-max-s", "9.3", "2026-11-29 16:00", "0123abc", "2"},
		{"ClusterFailover/race-loser-killed-pacemaker-3.0.0", "total-p50-s", "8.7", "2026-11-29 16:00", "0123abc", "2"},
		{"ClusterFailover/race-loser-killed-pacemaker-3.0.0", "total-max-s", "9.2", "2026-11-29 16:00", "0123abc", "2"},
		{"ClusterFailover/race-loser-killed-pacemaker-3.0.0", "runs", "3.00", "2026-11-29 16:00", "0123abc", "2"},
	}
	s := summary(rows)
	for _, want := range []string{
		"| power cut of the race loser (the winner serves) | 9.9 s / 11.0 s | 9.8 s / 11.0 s | 0 | 10 | 2026-11-27 04:00, `abc1234` | " +
			"API 8.8 s / 9.3 s, etcd 8.7 s / 9.2 s; 3 runs, 2026-11-29 16:00, `0123abc` | " +
			"API 61.0 s / 70.2 s, etcd 60.9 s / 70.1 s; **15 acknowledged objects an informer did not deliver within a minute**; 3 runs, 2026-11-28 22:00, `def5678` |",
		"| kubelet killed on one node | not measured yet | not measured yet | - | - | - | not measured yet | not measured yet |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if got := formatSeconds("0.1153"); got != "0.12 s" {
		t.Errorf("formatSeconds(0.1153) = %q", got)
	}
}

// TestDataSummary: a row per database size, smallest first whatever the page's order; a size's
// missing metric reads as "-"; the restore's cell says its own run where it differs; a variant of
// the rig is left out; no size, no table.
func TestDataSummary(t *testing.T) {
	var rows []row
	add := func(size string, metrics ...string) {
		for i := 0; i+1 < len(metrics); i += 2 {
			rows = append(rows, row{"LargeData/" + size, metrics[i], metrics[i+1], "2026-11-27 13:00", "abc1234", "2"})
		}
	}
	add("4GiB", "db-gib", "4.1", "planned-rejoin-s", "30.24", "planned-agent-s", "0.61")
	add("0.5GiB", "db-gib", "0.52", "planned-rejoin-s", "7.7", "planned-agent-s", "0.6", "fenced-rejoin-s", "7.2",
		"fenced-agent-s", "0.1", "planned-moved-gib", "0.53", "idle-write-p99-ms", "8.3", "planned-write-p99-ms", "5.16",
		"fenced-write-p99-ms", "4.2", "failover-s", "3.77", "cold-first-write-s", "4.26", "cold-both-voters-s", "11.4",
		"etcd-rss-max-mib", "784.2", "agent-rss-max-mib", "101.7")
	add("2GiB-joiner-on-tmpfs", "db-gib", "2.0")
	// The restore's, run on their own: one size the other benchmark measured, one it did not.
	restore := func(size, at string, metrics ...string) {
		for i := 0; i+1 < len(metrics); i += 2 {
			rows = append(rows, row{"RestoreLargeData/" + size, metrics[i], metrics[i+1], at, "def5678", "2"})
		}
	}
	restore("0.5GiB", "2026-12-01 20:00", "db-gib", "0.52", "api-write-s", "31.23", "layer-s", "8.04")
	restore("1GiB", "2026-12-01 21:00", "db-gib", "1.13", "api-write-s", "48.0", "layer-s", "9.1")
	rows = append(rows, row{"Monitor", "p50-ms", "6", "", "", ""})
	if s := dataSummary(rows[len(rows)-1:]); s != "" {
		t.Errorf("no large-data rows: %q, want nothing", s)
	}
	s := dataSummary(rows)
	small := "| 0.52 GiB | 7.7 s (0.60 s) / 7.2 s (0.10 s) | 0.53 GiB | 8.3 / 5.2 / 4.2 ms | 3.8 s | 4.3 s / 11.4 s | 31.2 s (8.0 s), 2026-12-01 20:00, `def5678` | 784 / 102 MiB | 2026-11-27 13:00, `abc1234` |"
	middle := "| 1.13 GiB | - (-) / - (-) | - GiB | - / - / - ms | - | - / - | 48.0 s (9.1 s), 2026-12-01 21:00, `def5678` | - / - MiB | - |"
	large := "| 4.10 GiB | 30.2 s (0.61 s) / - (-) | - GiB | - / - / - ms | - | - / - | - (-) | - / - MiB | 2026-11-27 13:00, `abc1234` |"
	i, j, k := strings.Index(s, small), strings.Index(s, middle), strings.Index(s, large)
	if i < 0 || j < 0 || k < 0 || i > j || j > k || strings.Count(s, "\n") != 5 {
		t.Errorf("want the 0.5 GiB row, then the 1 GiB and the 4 GiB ones:\n%s", s)
	}
}
