// Command benchtable turns `go test -bench` output into a table: one row per reported metric.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
)

func main() {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "benchmark\tmetric\tvalue")
	fmt.Fprintln(w, "---------\t------\t-----")
	failed := false
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "FAIL") {
			failed = true
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			if failed {
				fmt.Fprintln(os.Stderr, line)
			}
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		// f[1] is the iteration count; then value/unit pairs.
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == "ns/op" {
				continue
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", name, f[i+1], f[i])
		}
	}
	w.Flush()
	if failed {
		os.Exit(1)
	}
}
