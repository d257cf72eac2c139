// Package testbin finds the binaries `make build` put in bin/ for the integration tests: make
// passes the folder in TNF_BIN. For tests only.
package testbin

import (
	"os"
	"path/filepath"
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
