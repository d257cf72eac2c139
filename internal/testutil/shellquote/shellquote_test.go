package shellquote

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestJoinReadBackBySh: sh splits Join's line into the very words given, quotes, spaces,
// dollars and empty words included.
func TestJoinReadBackBySh(t *testing.T) {
	words := []string{"grep", "-q", "'nothing guarded'", "a b", "$HOME", "", `back\slash`, "it's"}
	out, err := exec.Command("/bin/sh", "-c", "set -- "+Join(words...)+`; for w; do printf '%s\n' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, words) {
		t.Fatalf("sh read %q, want %q", got, words)
	}
}
