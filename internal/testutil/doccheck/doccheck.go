// Package doccheck keeps the documentation true to the code: it finds every command line of a
// tool in the repository's Markdown and checks its subcommands and flags against the tool's
// cobra tree, and it keeps the generated command reference (docs/reference/) current. For
// tests only.
package doccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/tnf-layer/tnf-layer/internal/testutil/golden"
)

// ReferenceDir is where the generated command reference lives, from the repository's root.
const ReferenceDir = "docs/reference"

// Root is the repository's root: the nearest folder above the working directory with a go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// MarkdownFiles are the hand-written pages: every .md file of the repository except test data
// and the generated command reference (docs/reference/ but its README.md), relative to root.
func MarkdownFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" ||
				d.Name() == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Dir(rel) == ReferenceDir && d.Name() != "README.md" {
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// Snippet is a piece of code in a page: a line of a code block (continuation lines joined) or
// an inline code span.
type Snippet struct {
	File string
	Line int
	Text string
	// Block numbers the page's shell code blocks from 1 (0: an inline span); Lang is its fence's
	// language ("sh", "console", or none).
	Block int
	Lang  string
}

func (s Snippet) String() string { return fmt.Sprintf("%s:%d: %s", s.File, s.Line, s.Text) }

var inlineCode = regexp.MustCompile("`([^`]+)`")

// shellBlock are the code blocks that hold commands; others (text, yaml, mermaid) show output
// or files.
var shellBlock = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// Snippets reads every line of the pages' shell code blocks and every inline code span.
func Snippets(root string, files []string) ([]Snippet, error) {
	var out []Snippet
	for _, f := range files {
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		inBlock, shell, n, block, lang := false, false, 0, 0, ""
		var cont *Snippet
		for sc.Scan() {
			n++
			line := sc.Text()
			if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
				inBlock = !inBlock
				lang = strings.TrimSpace(fence)
				shell = inBlock && shellBlock[lang]
				if shell {
					block++
				}
				continue
			}
			if inBlock && !shell {
				continue
			}
			if !inBlock {
				for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
					out = append(out, Snippet{File: f, Line: n, Text: m[1]})
				}
				continue
			}
			if cont != nil {
				cont.Text += " " + strings.TrimSpace(line)
			} else {
				cont = &Snippet{File: f, Line: n, Text: line, Block: block, Lang: lang}
			}
			if strings.HasSuffix(cont.Text, "\\") {
				cont.Text = strings.TrimSuffix(cont.Text, "\\")
				continue
			}
			out = append(out, *cont)
			cont = nil
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UnitCommands are the command lines of the systemd units the layer ships (units/): their
// Exec lines are the tools' most used documentation.
func UnitCommands(root string) ([]Snippet, error) {
	var out []Snippet
	err := filepath.WalkDir(filepath.Join(root, "units"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(data), "\n") {
			if key, cmdline, ok := strings.Cut(line, "="); ok && strings.HasPrefix(key, "Exec") {
				out = append(out, Snippet{File: rel, Line: i + 1, Text: strings.TrimLeft(cmdline, "-+!@:")})
			}
		}
		return nil
	})
	return out, err
}

// Invocation is one command line of a tool found in a page: the words after the tool's name.
type Invocation struct {
	Snippet
	Args []string
}

// endsCommand says whether a word ends the shell command it is in: a control operator, a
// redirection, a pipe or a comment.
func endsCommand(w string) bool {
	return w == "&&" || w == "&" || w == ")" || strings.ContainsAny(w[:1], "#<>|") || strings.HasPrefix(w, "2>")
}

// Invocations finds the command lines of tool in the snippets: the tool's name as a word (or the
// last element of a path: bin/tnfctl, /usr/bin/tnfctl) and the words after it up to the end of
// the shell command. Optional parts written [--flag VALUE] and placeholders such as … count as
// written without their brackets.
func Invocations(snippets []Snippet, tool string) []Invocation {
	name := regexp.MustCompile(`(^|[\s/=(])` + regexp.QuoteMeta(tool) + `(\s|$)`)
	var out []Invocation
	for _, s := range snippets {
		for _, loc := range name.FindAllStringIndex(s.Text, -1) {
			var args []string
			for _, w := range strings.Fields(s.Text[loc[1]:]) {
				if endsCommand(w) {
					break
				}
				w, last := strings.CutSuffix(w, ";")
				if w = strings.Trim(w, "[]"); w != "" && w != "…" && w != "..." && w != "flags" {
					args = append(args, w)
				}
				if last {
					break
				}
			}
			out = append(out, Invocation{Snippet: s, Args: args})
		}
	}
	return out
}

// Check walks an invocation through the command tree: every word that names a subcommand goes
// down to it, every flag must exist on the command reached (its own or inherited), a flag that
// takes a value takes the next word, and the words left must be arguments the command accepts.
func Check(root *cobra.Command, inv Invocation) error {
	cmd := root
	var positional []string
	for i := 0; i < len(inv.Args); i++ {
		w := inv.Args[i]
		switch {
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			f := lookup(cmd, name, "")
			if f == nil {
				return fmt.Errorf("%s has no flag --%s", cmd.CommandPath(), name)
			}
			if !hasValue && f.NoOptDefVal == "" {
				i++
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			f := lookup(cmd, "", w[1:2])
			if f == nil {
				return fmt.Errorf("%s has no flag %s", cmd.CommandPath(), w[:2])
			}
			if len(w) == 2 && f.NoOptDefVal == "" {
				i++
			}
		default:
			if len(positional) == 0 {
				if sub := subcommand(cmd, w); sub != nil {
					cmd = sub
					continue
				}
				if cmd.HasAvailableSubCommands() && !cmd.Runnable() {
					return fmt.Errorf("%s has no subcommand %q", cmd.CommandPath(), w)
				}
			}
			positional = append(positional, w)
		}
	}
	if len(positional) > 0 {
		if err := cmd.ValidateArgs(positional); err != nil {
			return fmt.Errorf("%s %s: %v", cmd.CommandPath(), strings.Join(positional, " "), err)
		}
	}
	return nil
}

func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

func lookup(cmd *cobra.Command, name, short string) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
		if name != "" {
			if f := fs.Lookup(name); f != nil {
				return f
			}
		} else if f := fs.ShorthandLookup(short); f != nil {
			return f
		}
	}
	return nil
}

// CheckInvocations checks every command line of tool in the repository's pages and units
// against root.
// A page that names the tool nowhere is fine; a repository that never names it is not (the
// scan would be checking nothing).
func CheckInvocations(t *testing.T, root *cobra.Command, tool string) {
	t.Helper()
	withDefaults(root)
	repo := Root(t)
	files, err := MarkdownFiles(repo)
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := Snippets(repo, files)
	if err != nil {
		t.Fatal(err)
	}
	units, err := UnitCommands(repo)
	if err != nil {
		t.Fatal(err)
	}
	invs := Invocations(append(snippets, units...), tool)
	if len(invs) == 0 {
		t.Fatalf("no command line of %s in %d pages", tool, len(files))
	}
	for _, inv := range invs {
		if err := Check(root, inv); err != nil {
			t.Errorf("%s:%d: %v\n\t%s", inv.File, inv.Line, err, inv.Text)
		}
	}
	t.Logf("%d command lines of %s in %d pages", len(invs), tool, len(files))
}

// withDefaults adds the help and version flags and the help command cobra adds when it runs.
func withDefaults(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	for _, c := range root.Commands() {
		withDefaults(c)
	}
}

// CheckReference generates the tool's Markdown reference from root (cobra's own generator) and
// compares it with docs/reference/: a changed command, flag or help text fails until the
// reference is generated again (`go test -update`), and so does a page left from a command
// that is gone.
func CheckReference(t *testing.T, root *cobra.Command) {
	t.Helper()
	withDefaults(root)
	root.DisableAutoGenTag = true
	tmp := t.TempDir()
	if err := doc.GenMarkdownTree(root, tmp); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(Root(t), ReferenceDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	generated, err := filepath.Glob(filepath.Join(tmp, root.Name()+"*.md"))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, g := range generated {
		names[filepath.Base(g)] = true
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		golden.CheckFile(t, filepath.Join(dir, filepath.Base(g)), string(data))
	}
	for _, k := range kept {
		if names[filepath.Base(k)] {
			continue
		}
		if golden.Update() {
			if err := os.Remove(k); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s documents a command %s no longer has (go test -update to remove it)", k, root.Name())
	}
}
