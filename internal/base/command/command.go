// Package command runs external tools. A tool that fails comes back as an *Error that carries
// its command line, its exit code and what it printed, so every caller reports a failed tool the
// same way and can read its exit code with errors.As or ExitCode.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// maxOutput bounds the output an Error keeps: the end of a long log (debootstrap, a compiler)
// is where the reason is.
const maxOutput = 4000

// Error is a tool that failed: it exited non-zero, was killed, or did not start.
type Error struct {
	Args []string // the command line; never holds a secret (secrets go through files)
	// Code is the exit code, -1 when the tool did not exit on its own (not found, killed).
	Code int
	// Output is what the tool printed on standard error, or on standard output when it printed
	// nothing there; trimmed to its last maxOutput bytes.
	Output string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(strings.Join(e.Args, " "))
	if e.Code >= 0 {
		fmt.Fprintf(&b, ": exit %d", e.Code)
	} else {
		b.WriteString(": " + e.Err.Error())
	}
	if e.Output != "" {
		b.WriteString(": " + e.Output)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is a tool's exit code from the error Run returned: 0 for none, -1 when the tool did
// not exit on its own or the error is not a tool's.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return -1
}

// Cmd is how a tool runs: in Dir (the current folder when empty) with Env added to this
// process's environment, reading Stdin (nothing when nil).
type Cmd struct {
	Dir   string
	Env   []string
	Stdin io.Reader
}

// Run runs one tool and returns its standard output; a failure is an *Error.
func (c Cmd) Run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Dir
	cmd.Stdin = c.Stdin
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Args: append([]string{name}, args...), Code: -1, Output: FailureOutput(stdout.String(), stderr.String()), Err: err}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		e.Code = exit.ExitCode()
	}
	return stdout.String(), e
}

// FailureOutput is what an Error keeps of a failed tool's output: its standard error, or its
// standard output where it printed nothing there, trimmed to the last maxOutput bytes.
func FailureOutput(stdout, stderr string) string {
	out := strings.TrimSpace(stderr)
	if out == "" {
		out = strings.TrimSpace(stdout)
	}
	if len(out) > maxOutput {
		out = "…" + out[len(out)-maxOutput:]
	}
	return out
}

// Run runs one tool as Cmd{}.Run does.
func Run(ctx context.Context, name string, args ...string) (string, error) {
	return Cmd{}.Run(ctx, name, args...)
}
