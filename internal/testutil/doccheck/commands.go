package doccheck

import (
	"fmt"
	"slices"
	"strings"
)

// Command is one command a page has its reader type, as the page writes it: a line of a shell
// block (its continuation lines joined, its comment kept), a loop from its `for` line to its
// `done`, or in a console block the text after "$ ", with the lines the page shows as its output.
type Command struct {
	File   string
	Line   int
	Text   string
	Output []string
	block  int
}

func (c Command) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Commands are the commands of the pages' shell and console code blocks, in the pages' order.
func Commands(root string, files []string) ([]Command, error) {
	snippets, err := Snippets(root, files)
	if err != nil {
		return nil, err
	}
	var out []Command
	var loop *Command
	for _, s := range snippets {
		text := strings.TrimSpace(s.Text)
		if s.Block == 0 || text == "" {
			continue
		}
		cmd := Command{File: s.File, Line: s.Line, Text: text, block: s.Block}
		switch {
		case loop != nil && (s.File != loop.File || s.Block != loop.block):
			return nil, fmt.Errorf("%s: a loop whose block ends before its done", loop)
		case loop != nil:
			loop.Text += "\n" + text
			if text == "done" {
				out, loop = append(out, *loop), nil
			}
		case s.Lang == "console":
			if typed, ok := strings.CutPrefix(text, "$ "); ok {
				cmd.Text = typed
				out = append(out, cmd)
				continue
			}
			last := len(out) - 1
			if last < 0 || out[last].File != s.File || out[last].block != s.Block {
				return nil, fmt.Errorf("%s:%d: a console block's output before any \"$ \" command", s.File, s.Line)
			}
			out[last].Output = append(out[last].Output, text)
		case strings.HasPrefix(text, "for "):
			loop = &cmd
		default:
			out = append(out, cmd)
		}
	}
	if loop != nil {
		return nil, fmt.Errorf("%s: a loop without its done", loop)
	}
	return out, nil
}

// AdminPages are the pages whose commands an administrator types.
var AdminPages = []string{"docs/install.md", "docs/operate.md", "docs/runbooks.md"}

// InspectOnNode are the beginnings of the pages' commands that an administrator runs on a node
// and that change nothing of the cluster (gather writes its bundle): test/boot runs each as
// written on a booted node of the lab.
var InspectOnNode = []string{"tnfctl status", "tnfctl fence-check ", "tnfctl gather", "systemctl status ", "journalctl "}

// HasPrefix says whether the command begins with one of prefixes.
func (c Command) HasPrefix(prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c.Text, p) })
}

// OutputLines are the lines a command printed as a console block holds them: trimmed, the blank
// ones left out.
func OutputLines(printed string) []string {
	var out []string
	for _, l := range strings.Split(printed, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Comment is the comment of the command's last line (after " # "): what the page says it does.
func (c Command) Comment() string {
	_, comment, _ := strings.Cut(c.Text[strings.LastIndex(c.Text, "\n")+1:], " # ")
	return comment
}

// Typed is what bash runs of the command: its text without its lines' comments (" # ...").
func (c Command) Typed() string {
	lines := strings.Split(c.Text, "\n")
	for i, l := range lines {
		l, _, _ = strings.Cut(l, " # ")
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
