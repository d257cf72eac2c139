//go:build boot

package boot_test

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// pageNodes names the pages' nodes (install.md's tnf.yaml example) as the lab does.
var pageNodes = strings.NewReplacer("master-0", "node1", "master-1", "node2")

var exitLine = regexp.MustCompile(`\n?\[exit (\d+)\]\n$`)

// runInspections runs on node, as the pages write them (their node names the lab's), the
// commands an administrator types on a node that change nothing of the cluster
// (doccheck.InspectOnNode), in bash as root: each succeeds (systemctl status: the unit is
// active), and where the page shows the output, its lines begin as the page's do (fence-check's
// checks, in their order, each "ok:"; the details name the site's systems).
func (l *lab) runInspections(node string) {
	l.t.Helper()
	cmds, err := doccheck.Commands(doccheck.Root(l.t), doccheck.AdminPages)
	if err != nil {
		l.t.Fatal(err)
	}
	// As install.md's reader looks again while status says the pair recovers: under TCG's load a
	// monitor, or Pacemaker's controller, can time out just after the pair formed (seen twice in
	// four runs), and its recovery takes minutes.
	poll.Until(l.t, node+": tnfctl status says healthy", settleLimit, 10*time.Second, func() (bool, string) {
		out, err := l.vms[node].sshClient.run("tnfctl status")
		first, _, _ := strings.Cut(out, "\n")
		return err == nil, fmt.Sprint(first, err)
	})
	ran := map[string]bool{}
	for _, c := range cmds {
		// A command two pages give runs once: each costs seconds under TCG.
		if !c.HasPrefix(doccheck.InspectOnNode) || ran[c.Typed()] {
			continue
		}
		// The command as a script file, so that nothing of it needs quoting, run with no input.
		script := base64.StdEncoding.EncodeToString([]byte(pageNodes.Replace(c.Text) + "\n"))
		out, err := l.vms[node].sshClient.run("echo " + script + " | base64 -d > /run/tnf-page-step.sh && " +
			"bash /run/tnf-page-step.sh </dev/null 2>&1; echo \"[exit $?]\"")
		m := exitLine.FindStringSubmatch(out)
		if err != nil || m == nil {
			l.t.Fatalf("%s: %s: %v\n%s", node, c, err, out)
		}
		out = strings.TrimSuffix(out, m[0])
		code, _ := strconv.Atoi(m[1])
		l.t.Logf("%s: %s (exit %d)\n%s", node, c, code, out)
		switch {
		case code != 0:
			l.t.Errorf("%s: %s: exit %d", node, c, code)
		case len(c.Output) > 0 && !slices.Equal(lineStarts(doccheck.OutputLines(out)), lineStarts(c.Output)):
			l.t.Errorf("%s: %s: printed\n%s\nthe page shows\n%s", node, c, out, strings.Join(c.Output, "\n"))
		}
		ran[c.Typed()] = true
	}
	if len(ran) == 0 {
		l.t.Fatal("the pages give no command to inspect a node")
	}
}

// lineStarts are the first two words of each line.
func lineStarts(lines []string) []string {
	var out []string
	for _, l := range lines {
		w := strings.Fields(l)
		out = append(out, strings.Join(w[:min(2, len(w))], " "))
	}
	return out
}
