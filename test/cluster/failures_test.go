//go:build integration

package cluster_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// failureLog is the cluster's testing.TB: it keeps each failure's message so that the teardown
// can repeat them after the logs' tails, because a CI report often shows only the end of the
// output, and the end is otherwise the last node's agent log.
type failureLog struct {
	testing.TB
	mu    sync.Mutex
	msgs  []string
	notes []string // what else a reader of the end needs (a campaign's seed)
}

func (f *failureLog) keep(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, msg)
}

func (f *failureLog) Error(args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprint(args...))
	f.TB.Error(args...)
}

func (f *failureLog) Errorf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Errorf(format, args...)
}

func (f *failureLog) Fatal(args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprint(args...))
	f.TB.Fatal(args...)
}

func (f *failureLog) Fatalf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Fatalf(format, args...)
}

// note adds a line to the failure's summary.
func (f *failureLog) note(line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, line)
}

// summary is the failures' messages, then the notes.
func (f *failureLog) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s FAILED:", f.Name())
	if len(f.msgs) == 0 {
		// The test failed through its own testing.T, not the cluster's: its message is above.
		b.WriteString("\n  (the failure's message is above the nodes' log tails)")
	}
	for _, m := range f.msgs {
		b.WriteString("\n  " + strings.ReplaceAll(m, "\n", "\n  "))
	}
	for _, n := range f.notes {
		b.WriteString("\n" + n)
	}
	return b.String()
}
