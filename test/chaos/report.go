package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cycle is what one fault cost.
type Cycle struct {
	N     int
	Fault Fault
	// FirstWrite: from the moment the fault hit (the power cut, the link down, the shutdown
	// done) to the first write called after it that the cluster acknowledged (-1: none before
	// the next fault).
	FirstWrite time.Duration
	LongestGap time.Duration // the longest time without an acknowledged write, from the fault to the cycle's end
	// Recovery: from the fault to both members Promoted and taking writes again (-1: the next
	// fault came first, and its recovery counts for both).
	Recovery time.Duration
	Fences   int    // successful fencings during the cycle
	Admin    string // what the campaign did as an administrator, if anything
	// Note: a fault that found nothing to hit (no etcd running on a booting node), and who fenced
	// whom when a fault cost more than one fencing.
	Note string
}

const rowFormat = "%5s  %-60s %11s %11s %11s %6s  %s"

// Header is the per-cycle table's header.
func Header() string {
	return fmt.Sprintf(rowFormat, "cycle", "fault", "first write", "longest gap", "recovery", "fences", "admin / note")
}

// Row is one cycle's line of the table.
func (c Cycle) Row() string {
	return fmt.Sprintf(rowFormat, fmt.Sprint(c.N), c.Fault, seconds(c.FirstWrite), seconds(c.LongestGap), seconds(c.Recovery), fmt.Sprint(c.Fences), strings.Join(slices.DeleteFunc([]string{c.Admin, c.Note}, func(s string) bool { return s == "" }), "; "))
}

func seconds(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Summary counts the faults by kind and gives p50 and max of each figure, per kind and over all.
func Summary(cycles []Cycle) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %6s  %-19s %-19s %-19s %s\n", "fault", "cycles", "first write p50/max", "longest gap p50/max", "recovery p50/max", "fences max")
	line := func(name string, cs []Cycle) {
		if len(cs) == 0 {
			return
		}
		fences := 0
		for _, c := range cs {
			fences = max(fences, c.Fences)
		}
		fmt.Fprintf(&b, "%-20s %6d  %-19s %-19s %-19s %d\n", name, len(cs),
			p50max(cs, func(c Cycle) time.Duration { return c.FirstWrite }),
			p50max(cs, func(c Cycle) time.Duration { return c.LongestGap }),
			p50max(cs, func(c Cycle) time.Duration { return c.Recovery }), fences)
	}
	for _, k := range Kinds {
		line(string(k), slices.DeleteFunc(slices.Clone(cycles), func(c Cycle) bool { return c.Fault.Kind != k }))
	}
	line("all", cycles)
	admin := 0
	for _, c := range cycles {
		if c.Admin != "" {
			admin++
		}
	}
	fmt.Fprintf(&b, "admin steps: %d", admin)
	return b.String()
}

// p50max is "p50 / max" of the figure over the cycles that have it.
func p50max(cs []Cycle, figure func(Cycle) time.Duration) string {
	var ds []time.Duration
	for _, c := range cs {
		if d := figure(c); d >= 0 {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%.1f / %.1f s", ds[(len(ds)-1)/2].Seconds(), ds[len(ds)-1].Seconds())
}
