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
	if err != nil || failed || len(failures) != 0 || len(rows) != 2 || rows[0] != (row{bench: "Monitor", metric: "p50-ms", value: "6.2"}) {
		t.Fatalf("rows %v, failures %v, failed %v, %v", rows, failures, failed, err)
	}
	_, failures, failed, _ = parse(strings.NewReader("--- FAIL: BenchmarkX\n    x_test.go:1: boom\nFAIL\n"))
	if !failed || len(failures) != 3 {
		t.Errorf("a failed run: failed %v, failures %v", failed, failures)
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

// TestReadmeFiguresAreThePages: README's failover figures are the block the page generates.
func TestReadmeFiguresAreThePages(t *testing.T) {
	page, err := os.ReadFile("../../docs/benchmarks/make-bench.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pageRows(string(page), "make-bench.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := withSummary(string(readme), rows)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if string(readme) != want {
		t.Errorf("README.md's failover figures differ from the page's; regenerate them: go run ./test/benchtable -summary README.md -markdown docs/benchmarks/make-bench.md </dev/null")
	}
}

// TestSummary: a fault's figures come from its benchmark's rows, in seconds as people read them,
// with the run that measured them; a fault not measured says so.
func TestSummary(t *testing.T) {
	rows := []row{
		{"ClusterFailover/race-loser-killed", "api-write-p50-s", "9.912", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "api-write-max-s", "11.03", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "total-p50-s", "9.8", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "total-max-s", "10.97", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "survivor-relists", "0", "2026-11-27 04:00", "abc1234", "2"},
		{"ClusterFailover/race-loser-killed", "runs", "10.00", "2026-11-27 04:00", "abc1234", "2"},
	}
	s := summary(rows)
	for _, want := range []string{
		"| power cut of the race loser (the winner serves) | 9.9 s / 11.0 s | 9.8 s / 11.0 s | 0 | 10 | 2026-11-27 04:00, `abc1234` |",
		"| kubelet killed on one node | not measured yet | not measured yet | - | - | - |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if got := formatSeconds("0.1153"); got != "0.12 s" {
		t.Errorf("formatSeconds(0.1153) = %q", got)
	}
}
