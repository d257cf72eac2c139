package main

import (
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/clitest"
)

// TestVersion: --version and the version command print the same line, and -v is no flag (it is
// verbosity in oc and kubectl).
func TestVersion(t *testing.T) {
	run := func(args ...string) (string, error) { return clitest.Execute(rootCommand(), args...) }
	flag, err1 := run("--version")
	sub, err2 := run("version")
	if err1 != nil || err2 != nil || flag != sub || !strings.HasPrefix(flag, "tnfctl version ") {
		t.Errorf("--version %q (%v), version %q (%v)", flag, err1, sub, err2)
	}
	if _, err := run("-v"); err == nil {
		t.Error("-v is accepted")
	}
}
