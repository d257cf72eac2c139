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
