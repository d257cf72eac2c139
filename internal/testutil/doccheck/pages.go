package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// repoPath is a path inside the repository as pages write it: it starts with one of the
// repository's top-level folders. Paths on a node (/etc/tnf/…) start with a slash and are not
// matched.
var repoPath = regexp.MustCompile(`(?:^|[\s(,'"=])((?:agents|cmd|internal|test|ci|units|layers|pcs-templates|docs|tools|\.ci)/[^\s,;:)'"` + "`" + `]*)`)

// placeholder marks a path written as a pattern (layers/ocp-VERSION.yaml, etcd-pod-<N>).
var placeholder = regexp.MustCompile(`[<>*{}]|[A-Z]{3,}`)

// CheckPaths: every repository path written in a page's code exists.
func CheckPaths(t *testing.T, root string, snippets []Snippet) {
	t.Helper()
	for _, s := range snippets {
		for _, m := range repoPath.FindAllStringSubmatch(s.Text, -1) {
			p := strings.TrimRight(m[1], ".")
			if placeholder.MatchString(p) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s:%d: %s does not exist", s.File, s.Line, p)
			}
		}
	}
}

var makeCommand = regexp.MustCompile(`(?:^|[\s(])make\s+([^|;&#)]*)`)

// CheckMakeTargets: every `make TARGET` in a page's code is a target of the Makefile.
func CheckMakeTargets(t *testing.T, root string, snippets []Snippet) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(string(data), -1) {
		targets[m[1]] = true
	}
	for _, s := range snippets {
		for _, m := range makeCommand.FindAllStringSubmatch(s.Text, -1) {
			for _, w := range strings.Fields(m[1]) {
				if strings.Contains(w, "=") || strings.HasPrefix(w, "-") || placeholder.MatchString(w) || w == "…" {
					continue
				}
				if !targets[w] {
					t.Errorf("%s:%d: the Makefile has no target %q", s.File, s.Line, w)
				}
			}
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+)$`)
)

// CheckLinks: every relative link of a page reaches a file of the repository, and a link to a
// section of a page reaches one of its headings (GitHub's anchors).
func CheckLinks(t *testing.T, root string, files []string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				if err := checkLink(root, f, m[1]); err != nil {
					t.Errorf("%s:%d: %v", f, i+1, err)
				}
			}
		}
	}
}

func checkLink(root, page, link string) error {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return nil
	}
	target, anchor, _ := strings.Cut(link, "#")
	file := filepath.Join(root, page)
	if target != "" {
		file = filepath.Join(root, filepath.Dir(page), target)
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("link %s: %s does not exist", link, target)
		}
	}
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for _, h := range heading.FindAllStringSubmatch(string(data), -1) {
		if Anchor(h[1]) == anchor {
			return nil
		}
	}
	return fmt.Errorf("link %s: no heading of %s has the anchor #%s", link, filepath.Base(file), anchor)
}

// Anchor is the anchor GitHub gives a heading: lower case, letters, digits, '-' and '_' kept,
// spaces made '-', everything else dropped.
func Anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// InstallCredential is the tnfctl command line install.md pipes a token to for kind (node or
// handover), as the page writes it: `oc create token … | ssh core@<node> sudo tnfctl
// install-credential kind`. The tests run it so, the docs' command being the test's.
func InstallCredential(t testing.TB, kind string) []string {
	t.Helper()
	root := Root(t)
	snippets, err := Snippets(root, []string{"docs/install.md"})
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range Invocations(snippets, "tnfctl") {
		if strings.Contains(inv.Text, "oc create token") && strings.Contains(inv.Text, "| ssh core@") &&
			slices.Equal(inv.Args, []string{"install-credential", kind}) {
			return append([]string{"tnfctl"}, inv.Args...)
		}
	}
	t.Fatalf("docs/install.md pipes no token to tnfctl install-credential %s", kind)
	return nil
}

// Example is the code block of page (from the repository's root) that the line before its
// fence marks `<!-- example: NAME -->`, as the page writes it.
func Example(t testing.TB, page, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Root(t), page))
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- example: " + name + " -->\n```"
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s: no %s example (%s before a code block)", page, name, strings.TrimSuffix(marker, "\n```"))
	}
	_, rest, _ = strings.Cut(rest, "\n")
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: the %s example's block does not end", page, name)
	}
	return example
}
