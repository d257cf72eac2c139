package version

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinkFlagNamesThisPackage: the flag names this package as the go command knows it.
func TestLinkFlagNamesThisPackage(t *testing.T) {
	out, err := exec.Command("go", "list", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "-X " + strings.TrimSpace(string(out)) + ".Version=1.0"; LinkFlag("1.0") != want {
		t.Fatalf("LinkFlag: %q, want %q", LinkFlag("1.0"), want)
	}
}
