package main

import (
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/clitest"
)

// TestRootBuilds: `build-layer --ocp 4.19`, the form in which the tool was specified, builds as
// `build-layer build` does (here it stops at the missing --push, before anything is built);
// without flags it shows the help; --version and version print the same line.
func TestRootBuilds(t *testing.T) {
	run := func(args ...string) (string, error) { return clitest.Execute(rootCommand(), args...) }
	for _, args := range [][]string{{"--ocp", "4.19"}, {"build", "--ocp", "4.19"}} {
		if _, err := run(args...); err == nil || !strings.HasPrefix(err.Error(), "--push: missing") {
			t.Errorf("build-layer %s: %v, want the build's missing --push", strings.Join(args, " "), err)
		}
	}
	if out, err := run(); err != nil || !strings.Contains(out, "Without a command it builds") {
		t.Errorf("build-layer alone: %v\n%s", err, out)
	}
	flag, err1 := run("--version")
	sub, err2 := run("version")
	if err1 != nil || err2 != nil || flag != sub || !strings.HasPrefix(flag, "build-layer ") {
		t.Errorf("--version %q (%v), version %q (%v)", flag, err1, sub, err2)
	}
}
