package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// measured is a figure as the pages write a measurement: a decimal number and its unit. Settings
// are written without a decimal point (3 s, 500 ms), so they are not taken for measurements, nor
// are goals (bound).
var measured = regexp.MustCompile(`\b(\d+\.\d+) ?(ms|s|MiB|GiB)\b`)

// goal is what ends the text before a goal's figure: a bound's sign, and a p50 before the max
// (≤ 9.5 s, ≤ 8 / 9.5 s).
var goal = regexp.MustCompile(`[≤≥<>] ?(\d+(\.\d+)? ?(s|ms)? ?/ ?)?$`)

// dated is a date in a paragraph: a figure in it, or in a later paragraph of the same section, is a
// note of one run, said with when.
var dated = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)

// inBase converts a value in unit to seconds (s, ms) or MiB (MiB, GiB); ok is false for any other
// unit.
func inBase(v float64, unit string) (float64, bool) {
	switch unit {
	case "s", "MiB":
		return v, true
	case "ms":
		return v / 1000, true
	case "GiB":
		return v * 1024, true
	}
	return 0, false
}

// pageValues are the page's figures in base units, by unit family ("s" or "MiB").
func pageValues(rows []row) map[string][]float64 {
	values := map[string][]float64{}
	for _, r := range rows {
		unit := r.metric[strings.LastIndex(r.metric, "-")+1:]
		v, err := strconv.ParseFloat(r.value, 64)
		if err != nil {
			continue
		}
		if b, ok := inBase(v, unit); ok {
			values[family(unit)] = append(values[family(unit)], b)
		}
	}
	return values
}

func family(unit string) string {
	if strings.HasSuffix(unit, "s") {
		return "s"
	}
	return "MiB"
}

// held says whether a page value, written in the figure's unit and to its decimals, is the figure.
func held(values map[string][]float64, number, unit string) bool {
	want, _ := strconv.ParseFloat(number, 64)
	decimals := len(number) - strings.Index(number, ".") - 1
	scale := math.Pow(10, float64(decimals))
	per, _ := inBase(1, unit)
	for _, v := range values[family(unit)] {
		if math.Round(v/per*scale) == math.Round(want*scale) {
			return true
		}
	}
	return false
}

// blankLine ends a paragraph.
var blankLine = regexp.MustCompile(`\n[ \t]*\n`)

// generatedOrCode are the blocks of a page that are not prose: the generated figures and code.
var generatedOrCode = regexp.MustCompile("(?s)<!-- [^>]*generated.*?<!-- end of[^>]*-->|```.*?```")

// proseFigures are the measurements a page's prose quotes that the generated page does not hold,
// where neither their paragraph nor an earlier one of their section says when they were measured:
// each a "page:line: figure" string.
func proseFigures(name, text string, values map[string][]float64) []string {
	text = generatedOrCode.ReplaceAllStringFunc(text, func(s string) string {
		return strings.Repeat("\n", strings.Count(s, "\n")) // keeps the line numbers
	})
	var drift []string
	line := 1
	sectionDated := false
	for _, para := range blankLine.Split(text, -1) {
		if strings.HasPrefix(strings.TrimLeft(para, "\n"), "#") {
			sectionDated = false
		}
		sectionDated = sectionDated || dated.MatchString(para)
		if !sectionDated {
			for _, m := range measured.FindAllStringSubmatchIndex(para, -1) {
				number, unit := para[m[2]:m[3]], para[m[4]:m[5]]
				if !goal.MatchString(para[:m[0]]) && !held(values, number, unit) {
					drift = append(drift, name+":"+strconv.Itoa(line+strings.Count(para[:m[0]], "\n"))+": "+para[m[0]:m[1]])
				}
			}
		}
		line += strings.Count(para, "\n") + 2
	}
	return drift
}

// TestProseQuotesThePage: a measurement the pages quote in prose is one the generated page holds,
// or its paragraph says when it was measured (a note of one run). Figures that drift from the page
// (an old p50 left in a sentence) fail here.
func TestProseQuotesThePage(t *testing.T) {
	values := pageValues(shippedRows(t))
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, "../../README.md", "../../CONTRIBUTING.md") {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range proseFigures(strings.TrimPrefix(p, "../../"), string(text), values) {
			t.Errorf("%s: not on docs/benchmarks/make-bench.md, and its paragraph names no date of the run that measured it", d)
		}
	}
}

// TestProseFigures: what counts as a quoted measurement, and where it is reported.
func TestProseFigures(t *testing.T) {
	values := pageValues([]row{{metric: "api-p50-s", value: "8.912"}, {metric: "peak-MiB", value: "806.2"}, {metric: "gap-ms", value: "35.46"}})
	text := "Intro.\n\n<!-- figures: generated -->\n| 1.1 s |\n<!-- end of figures -->\n\n" +
		"Held: 8.9 s, 8.91 s, 8912 ms is no decimal, 0.79 GiB, 35.5 ms, 0.035 s; goals ≤ 7.5 s, ≤7.5 s, < 1.5 s, ≤ 8 / 9.5 s, ≤ 7.5 s / 8.5 s.\n" +
		"Drift: 10.7 s and 6.8 s.\n\n```\n4.4 s\n```\n\nOn 2026-11-28: 12.5 s.\n\nThe same run: 3.3 ms\n\n" +
		"## Next\n\nAgain 3.3 ms\n"
	got := proseFigures("p.md", text, values)
	want := []string{"p.md:8: 10.7 s", "p.md:8: 6.8 s", "p.md:20: 3.3 ms"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
