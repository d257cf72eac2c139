package buildlayer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceable: render replaces only what it wrote, an empty folder or none.
func TestReplaceable(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files ...string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(p, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"absent", filepath.Join(dir, "absent"), true},
		{"empty", mk("empty"), true},
		{"earlier output", mk("earlier", dryRunMarker, "Containerfile"), true},
		{"a checkout", mk("checkout", "go.mod", "README.md"), false},
		{"a file", filepath.Join(mk("files", "f"), "f"), false},
	} {
		err := replaceable(tc.path)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--dir") {
			t.Errorf("%s: %q does not name the flag", tc.name, err)
		}
	}
}
