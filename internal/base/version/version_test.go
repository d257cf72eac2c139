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

// TestDescribe: the release joins the version only when known.
func TestDescribe(t *testing.T) {
	defer func(v, r string) { Version, Release = v, r }(Version, Release)
	Version, Release = "0.2.0+abc", ""
	if got := Describe(); got != "0.2.0+abc" {
		t.Errorf("without a release: %q", got)
	}
	Release = "4.19.7"
	if got := Describe(); got != "0.2.0+abc (operating system of OpenShift 4.19.7)" {
		t.Errorf("with a release: %q", got)
	}
	if got := LinkFlags("1.0", "4.19.7"); !strings.HasSuffix(got, ".Release=4.19.7") || !strings.HasPrefix(got, LinkFlag("1.0")) {
		t.Errorf("LinkFlags: %q", got)
	}
}
