package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseAndPage(t *testing.T) {
	out := `goos: linux
BenchmarkMonitor-2   	       1	  123 ns/op	         6.2 p50-ms	         8.6 p99-ms
PASS
`
	rows, failures, failed, err := parse(strings.NewReader(out))
	if err != nil || failed || len(failures) != 0 || len(rows) != 2 || rows[0] != (row{"Monitor", "p50-ms", "6.2"}) {
		t.Fatalf("rows %v, failures %v, failed %v, %v", rows, failures, failed, err)
	}
	page := markdown(rows, "make bench", "", time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC), "abc1234", 2)
	for _, want := range []string{"# make bench: the last run", "Run on 2026-11-26 07:00 UTC, commit `abc1234`, 2 CPUs.", "| `Monitor` | p99-ms | 8.6 |"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	_, failures, failed, _ = parse(strings.NewReader("--- FAIL: BenchmarkX\n    x_test.go:1: boom\nFAIL\n"))
	if !failed || len(failures) != 3 {
		t.Errorf("a failed run: failed %v, failures %v", failed, failures)
	}
}
