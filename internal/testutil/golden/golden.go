// Package golden compares what a test rendered with a file under testdata/; `go test -update`
// rewrites the files instead. For tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Update says whether this run rewrites golden files (`go test -update`).
func Update() bool { return *update }

// Check compares got with testdata/name.
func Check(t testing.TB, name, got string) {
	t.Helper()
	CheckFile(t, filepath.Join("testdata", name), got)
}

// CheckFile compares got with the file at path (relative to the test's package).
func CheckFile(t testing.TB, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the rendering (go test -update to accept):\n%s", file, got)
	}
}
