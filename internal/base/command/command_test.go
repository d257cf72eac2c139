package command

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		cmd      Cmd
		args     []string
		stdout   string
		code     int
		errParts []string // what the error's text names; nil for success
	}{
		{name: "success", args: []string{"sh", "-c", "echo out; echo err >&2"}, stdout: "out\n", code: 0},
		{name: "stderr is the reason", args: []string{"sh", "-c", "echo partial; echo broken >&2; exit 3"}, stdout: "partial\n", code: 3,
			errParts: []string{"sh -c echo partial; echo broken >&2; exit 3", "exit 3", "broken"}},
		{name: "stdout when stderr is empty", args: []string{"sh", "-c", "echo why; exit 1"}, stdout: "why\n", code: 1,
			errParts: []string{"exit 1: why"}},
		{name: "environment and folder", cmd: Cmd{Dir: "/", Env: []string{"TNF_COMMAND_TEST=x"}},
			args: []string{"sh", "-c", `echo "$TNF_COMMAND_TEST $PWD"`}, stdout: "x /\n", code: 0},
		{name: "not found", args: []string{"/nonexistent/tool", "arg"}, code: -1,
			errParts: []string{"/nonexistent/tool arg: ", "no such file"}},
		{name: "killed", args: []string{"sh", "-c", "kill -9 $$"}, code: -1, errParts: []string{"signal: killed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.cmd.Run(ctx, tc.args[0], tc.args[1:]...)
			if out != tc.stdout {
				t.Errorf("stdout %q, want %q", out, tc.stdout)
			}
			if got := ExitCode(err); got != tc.code {
				t.Errorf("ExitCode %d, want %d (err %v)", got, tc.code, err)
			}
			if tc.errParts == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			for _, part := range tc.errParts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
		})
	}
}

func TestErrorUnwraps(t *testing.T) {
	_, err := Run(context.Background(), "sh", "-c", "exit 2")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("%v does not unwrap to *exec.ExitError", err)
	}
}

func TestLongOutputKeepsItsEnd(t *testing.T) {
	_, err := Run(context.Background(), "sh", "-c", "head -c 10000 /dev/zero | tr '\\0' a; echo THE-END >&2; exit 1")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatal(err)
	}
	if e.Output != "THE-END" {
		t.Errorf("output %q, want the stderr line", e.Output)
	}
	_, err = Run(context.Background(), "sh", "-c", "head -c 10000 /dev/zero | tr '\\0' a >&2; echo THE-END >&2; exit 1")
	if !errors.As(err, &e) || len(e.Output) > maxOutput+len("…") || !strings.HasSuffix(e.Output, "THE-END") {
		t.Errorf("output of %d bytes ending %q: want at most %d ending THE-END", len(e.Output), e.Output[max(0, len(e.Output)-10):], maxOutput)
	}
}

func TestExitCodeOfOtherErrors(t *testing.T) {
	if got := ExitCode(errors.New("not a tool's")); got != -1 {
		t.Errorf("ExitCode of a plain error: %d, want -1", got)
	}
	if got := ExitCode(nil); got != 0 {
		t.Errorf("ExitCode(nil): %d, want 0", got)
	}
}
