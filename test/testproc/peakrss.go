package testproc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// PeakRSS runs a command under GNU time to read its peak resident memory. The rusage a Go
// program gets for its own child cannot tell it: Go starts children with vfork, and Linux folds
// the parent's peak into the child's at exec, so a child of a test that holds 200 MiB reports
// at least 200 MiB. time forks the command from its own small process instead.
type PeakRSS struct{ file string }

// NewPeakRSS records into a file of dir.
func NewPeakRSS(dir string) (PeakRSS, error) {
	f, err := os.CreateTemp(dir, "peak-rss-*")
	if err != nil {
		return PeakRSS{}, err
	}
	return PeakRSS{f.Name()}, f.Close()
}

// Wrap is argv run under time; the command's exit status is time's.
func (p PeakRSS) Wrap(argv ...string) []string {
	return append([]string{"/usr/bin/time", "-f", "%M", "-o", p.file, "--"}, argv...)
}

// Bytes is the peak of the last command Wrap ran: the last line time wrote (before it, time
// writes a line of its own when the command failed).
func (p PeakRSS) Bytes() (int64, error) {
	data, err := os.ReadFile(p.file)
	if err != nil {
		return 0, err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	kib, err := strconv.ParseInt(string(lines[len(lines)-1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is no peak in KiB: %w", p.file, data, err)
	}
	return kib << 10, nil
}
