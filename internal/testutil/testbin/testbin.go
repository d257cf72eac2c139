// Package testbin finds the binaries `make build` put in bin/ for the integration tests: make
// passes the folder in TNF_BIN. For tests only.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Dir is the folder of the built binaries; the test fails when make did not set it.
func Dir(t testing.TB) string {
	dir := os.Getenv("TNF_BIN")
	if dir == "" {
		t.Fatal("TNF_BIN is not set: run through make test")
	}
	return dir
}

// Path is one built binary.
func Path(t testing.TB, name string) string { return filepath.Join(Dir(t), name) }

// Etcd is the etcd server the tests run: TNF_ETCD when set (make test sets it to the 3.6 build
// for a second run of the etcd suites), else bin/etcd (3.5).
func Etcd(t testing.TB) string {
	if p := os.Getenv("TNF_ETCD"); p != "" {
		return p
	}
	return Path(t, "etcd")
}

// Previous is the folder of the previous release's agents: make previous-release builds them from
// the commit the CHANGELOG names for that release, and make sets TNF_PREVIOUS_BIN. A clone without
// that commit cannot build them: the test is skipped, saying so.
func Previous(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TNF_PREVIOUS_BIN")
	if dir == "" {
		t.Skip("TNF_PREVIOUS_BIN is not set: make test, make test-one, make cluster-ci and make cluster-test build the previous release's agents and set it")
	}
	if _, err := os.Stat(filepath.Join(dir, "tnfctl")); err != nil {
		t.Skipf("the previous release's agents are not built (%v): make previous-release says why", err)
	}
	return dir
}

// Release is the version the agents in bin report (tnfctl --version).
func Release(t testing.TB, bin string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, "tnfctl"), "--version").Output()
	if err != nil {
		t.Fatalf("%s/tnfctl --version: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}
