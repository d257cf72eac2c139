package tnflayer_test

import (
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
)

// TestPages: what the pages name exists: every repository path in their code, every make
// target, every relative link and section anchor. Command lines of tnfctl and build-layer are
// checked against their commands in agents/tnfctl and cmd/build-layer.
func TestPages(t *testing.T) {
	root := doccheck.Root(t)
	files, err := doccheck.MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := doccheck.Snippets(root, files)
	if err != nil {
		t.Fatal(err)
	}
	doccheck.CheckPaths(t, root, snippets)
	doccheck.CheckMakeTargets(t, root, snippets)
	doccheck.CheckLinks(t, root, files)
}
