package buildlayer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestSourceVersion: the release in VERSION with the commit as build metadata, marked dirty
// while a tracked file differs from it; git describe where the source has no VERSION file.
func TestSourceVersion(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("a", "1")
	run("add", "a")
	run("commit", "-q", "-m", "first")
	if v := sourceVersion(dir); !regexp.MustCompile(`^[0-9a-f]{7,}$`).MatchString(v) {
		t.Errorf("without VERSION: %q, want git describe's abbreviated commit", v)
	}
	write("VERSION", "0.3.0-dev\n")
	run("add", "VERSION")
	run("commit", "-q", "-m", "version")
	if v := sourceVersion(dir); !regexp.MustCompile(`^0\.3\.0-dev\+[0-9a-f]{7,}$`).MatchString(v) {
		t.Errorf("with VERSION: %q, want 0.3.0-dev+<commit>", v)
	}
	write("a", "2")
	if v := sourceVersion(dir); !regexp.MustCompile(`^0\.3\.0-dev\+[0-9a-f]{7,}\.dirty$`).MatchString(v) {
		t.Errorf("with a change: %q, want 0.3.0-dev+<commit>.dirty", v)
	}
}
