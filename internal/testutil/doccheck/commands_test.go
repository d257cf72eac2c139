package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writePage(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCommands: a page's commands as a reader types them: shell lines with their continuations
// joined and their comments kept, a loop whole, a console block's commands with their output;
// no inline code, no other block's lines.
func TestCommands(t *testing.T) {
	root := writePage(t, "Run `not this`:\n\n"+
		"```sh\noc apply -f a.yaml \\\n    -f b.yaml   # two\n\nfor n in x y; do\n  echo $n\ndone\n```\n\n"+
		"```yaml\nkind: Nothing\n```\n\n"+
		"   ```console\n   $ tnfctl fence-check\n   redfish: ok\n\n   level2: ok\n   $ true\n   ```\n")
	got, err := Commands(root, []string{"page.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{File: "page.md", Line: 4, Text: "oc apply -f a.yaml  -f b.yaml   # two", block: 1},
		{File: "page.md", Line: 7, Text: "for n in x y; do\necho $n\ndone", block: 1},
		{File: "page.md", Line: 17, Text: "tnfctl fence-check", Output: []string{"redfish: ok", "level2: ok"}, block: 2},
		{File: "page.md", Line: 21, Text: "true", block: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	if !got[2].HasPrefix([]string{"oc ", "tnfctl fence"}) || got[0].HasPrefix([]string{"tnfctl "}) {
		t.Error("HasPrefix")
	}
	if typed, comment := got[0].Typed(), got[0].Comment(); typed != "oc apply -f a.yaml  -f b.yaml" || comment != "two" {
		t.Errorf("Typed %q, Comment %q", typed, comment)
	}
}

// TestCommandsRefuses: a loop whose block ends first, and console output before any command.
func TestCommandsRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"loop":    "```sh\nfor n in x; do\n  echo\n```\n\n```sh\ndone\n```\n",
		"console": "```console\nan output line\n$ true\n```\n",
	} {
		if _, err := Commands(writePage(t, body), []string{"page.md"}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestOutputLines(t *testing.T) {
	if got := OutputLines("  a \n\n b\n"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("%q", got)
	}
}
