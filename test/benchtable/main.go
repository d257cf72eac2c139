// Command benchtable turns `go test -bench` output into a table: one row per reported metric.
// With -markdown it also writes the rows into a Markdown page where each row carries the date,
// commit and CPU count of the run that measured it: a run replaces the rows of the benchmarks it
// ran and keeps the others, so a part of the benchmarks (make bench-failover) can be run again
// alone and the documentation's figures still come from runs, never from a hand copy.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// row is one reported metric of one benchmark, and the run that measured it.
type row struct{ bench, metric, value, at, commit, cpus string }

// parse reads go test's output: the rows, the lines to show when something failed, and each
// failed benchmark with its reason (the line after the cluster harness's "NAME FAILED:", when
// there is one).
func parse(r io.Reader) (rows []row, failures []string, failed map[string]string, err error) {
	failed = map[string]string{}
	reasons := map[string]string{} // by benchmark, from the harness's summaries
	reasonFor := ""                // the benchmark whose summary's reason is the next line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "--- FAIL: Benchmark"); ok {
			name, _, _ = strings.Cut(name, " ")
			failed[name] = reasons[name]
		} else if strings.HasPrefix(line, "FAIL") && len(failed) == 0 {
			failed[""] = "" // a failure outside any benchmark
		}
		// The harness's summary names the benchmark ("    x_test.go:1: BenchmarkX/y FAILED:") and
		// comes before go test's "--- FAIL" line with -v, after it without.
		if reasonFor != "" {
			reasons[reasonFor] = strings.TrimSpace(line)
			if _, ok := failed[reasonFor]; ok {
				failed[reasonFor] = reasons[reasonFor]
			}
		}
		reasonFor = ""
		if f := strings.Fields(line); len(f) >= 2 && f[len(f)-1] == "FAILED:" && strings.HasPrefix(f[len(f)-2], "Benchmark") {
			reasonFor = strings.TrimPrefix(f[len(f)-2], "Benchmark")
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			if len(failed) > 0 {
				failures = append(failures, line)
			}
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		// f[1] is the iteration count; then value/unit pairs.
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] != "ns/op" {
				rows = append(rows, row{bench: name, metric: f[i+1], value: f[i]})
			}
		}
	}
	return rows, failures, failed, sc.Err()
}

// failedRows are a row per failed benchmark, metric "failed", its reason the value (made to fit
// a cell): for a page that says which benchmarks failed beside the others' figures. A benchmark
// whose sub-benchmark failed has no row of its own; a failure outside any benchmark has none.
func failedRows(failed map[string]string) []row {
	var rows []row
	names := slices.Sorted(maps.Keys(failed))
	for _, name := range names {
		if name == "" || slices.ContainsFunc(names, func(o string) bool { return strings.HasPrefix(o, name+"/") }) {
			continue
		}
		reason := strings.ReplaceAll(failed[name], "|", "/")
		if reason == "" {
			reason = "see the run's log"
		}
		if r := []rune(reason); len(r) > 160 {
			reason = string(r[:160]) + "…"
		}
		rows = append(rows, row{bench: name, metric: "failed", value: reason})
	}
	return rows
}

// tableHeader opens the page's table; pageRows reads the rows under it back.
const tableHeader = "| benchmark | metric | value | run (UTC) | commit | CPUs |\n| --- | --- | --- | --- | --- | --- |\n"

// pageRows reads the rows of a page markdown wrote; a row it cannot read is an error naming
// its line, so a hand edit never silently drops figures.
func pageRows(page, name string) ([]row, error) {
	var rows []row
	for i, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if len(f) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 columns (%s), got %d", name, i+1, strings.TrimSpace(strings.Split(tableHeader, "\n")[0]), len(f))
		}
		rows = append(rows, row{strings.Trim(f[0], "`"), f[1], f[2], f[3], strings.Trim(f[4], "`"), f[5]})
	}
	return rows, nil
}

// merge is the page's rows with those of every benchmark that ran replaced by the new ones, in
// the page's order, benchmarks new to the page at the end.
func merge(old, ran []row) []row {
	var order []string
	byBench := map[string][]row{}
	for _, r := range old {
		if !slices.Contains(order, r.bench) {
			order = append(order, r.bench)
		}
		byBench[r.bench] = append(byBench[r.bench], r)
	}
	replaced := map[string]bool{}
	for _, r := range ran {
		if !replaced[r.bench] {
			replaced[r.bench], byBench[r.bench] = true, nil
			if !slices.Contains(order, r.bench) {
				order = append(order, r.bench)
			}
		}
		byBench[r.bench] = append(byBench[r.bench], r)
	}
	var rows []row
	for _, b := range order {
		rows = append(rows, byBench[b]...)
	}
	return rows
}

// markdown is the generated page.
func markdown(rows []row, target string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: the latest figures\n\nGenerated by `%s` and the targets that run a part of it (`test/benchtable -markdown`); do not edit.\n"+
		"Each row is from the last run that measured it: its date, commit and CPU count. What each figure means: [benchmarks.md](../benchmarks.md).\n\n",
		target, target)
	b.WriteString(tableHeader)
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` | %s |\n", r.bench, r.metric, r.value, r.at, r.commit, r.cpus)
	}
	return b.String()
}

func main() {
	page := flag.String("markdown", "", "also write the rows into this Markdown page, replacing the rows of the benchmarks that ran")
	commit := flag.String("commit", "", "the commit measured, for the page")
	target := flag.String("target", "make bench", "the page's make target, for its title")
	readme := flag.String("summary", "", "also regenerate this file's blocks of figures from the page")
	keepFailed := flag.Bool("keep-failed", false, "when a benchmark failed, still write the others' rows, and a row saying so for each failed one")
	flag.Parse()
	rows, failures, failed, err := parse(os.Stdin)
	if *keepFailed {
		rows = append(rows, failedRows(failed)...)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "benchmark\tmetric\tvalue")
	fmt.Fprintln(w, "---------\t------\t-----")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.bench, r.metric, r.value)
	}
	w.Flush()
	for _, l := range failures {
		fmt.Fprintln(os.Stderr, l)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	// A failed run leaves the page alone, unless asked to keep what it measured.
	if *page != "" && len(rows) > 0 && (len(failed) == 0 || *keepFailed) {
		if err := writePage(*page, *target, *commit, rows, time.Now()); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	// From the page, whether this run added rows or not: with no input it regenerates the blocks.
	if *readme != "" && *page != "" && (len(failed) == 0 || *keepFailed) {
		if err := writeSummary(*readme, *page); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	if len(failed) > 0 {
		os.Exit(1)
	}
}

// writeSummary regenerates readme's blocks of figures from the page.
func writeSummary(readme, page string) error {
	data, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	rows, err := pageRows(string(data), page)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := withSummary(string(text), rows)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return fsutil.WriteFileAtomic(readme, []byte(out), 0o644)
}

// writePage stamps the run's rows and merges them into the page.
func writePage(page, target, commit string, ran []row, at time.Time) error {
	for i := range ran {
		ran[i].at, ran[i].commit, ran[i].cpus = at.UTC().Format("2006-01-02 15:04"), commit, fmt.Sprint(runtime.NumCPU())
	}
	data, err := os.ReadFile(page)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	old, err := pageRows(string(data), page)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(page, []byte(markdown(merge(old, ran), target)), 0o644)
}
