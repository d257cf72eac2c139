//go:build integration

package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/toolanswers"
)

// TestToolAnswers asks the HA stack's tools, on a real node, what the layer asks them (the same
// command lines), in the states the layer meets: an attribute set and not set, a node the CIB
// does not know, the peer not joined yet, a CIB section absent, Pacemaker and Corosync stopped,
// and the status, configuration, membership, quorum and links outputs the layer parses. The
// answers of each version are kept in toolanswers.Dir, and pcmk's tests read every version's.
// This test compares the stack's answers with that version's kept ones (exit code and standard
// error; the outputs the layer parses carry times and ids): a difference, or a version with none
// kept, fails until `make pacemaker-answers` (TNF_UPDATE_ANSWERS=1) writes them again.
func TestToolAnswers(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	got := toolanswers.Stack{Answers: map[string]toolanswers.Answer{}}
	ask := func(name, node string, argv ...string) {
		got.Answers[name] = c.ask(node, argv...)
	}
	attribute := func(node, name, lifetime string, action ...string) []string {
		return append([]string{"crm_attribute", "--node", node, "--name", name, "--lifetime", lifetime}, action...)
	}
	query := []string{"--query", "--quiet"}

	c.power("on", "node1")
	// Once it has a DC, Pacemaker has written the nodes Corosync lists into the CIB.
	c.waitFor("node1's Pacemaker with a DC", settle, func() (bool, string) {
		_, st, err := c.status("node1")
		return err == nil && st != nil && st.DC != "", fmt.Sprint(err)
	})
	ask(toolanswers.StatusAlone, "node1", pcmk.StatusCommand()...)
	ask(toolanswers.QuorumAlone, "node1", "corosync-quorumtool", "-s")
	ask(toolanswers.AttributeOfAbsentPeer, "node1", attribute("node2", "tnf-answers", "forever", query...)...)

	c.power("on", "node2")
	c.waitRoles("node1", bothPromoted)
	got.Versions = c.checkStack("node1")
	ask(toolanswers.Status, "node1", pcmk.StatusCommand()...)
	ask(toolanswers.ConfigurationSection, "node1", "cibadmin", "--query", "--scope", "configuration")
	ask(toolanswers.Nodelist, "node1", "corosync-cmapctl", "-b", "nodelist.node.")
	ask(toolanswers.Runtime, "node1", "corosync-cmapctl", "-b", "runtime.")
	ask(toolanswers.Quorum, "node1", "corosync-quorumtool", "-s")
	ask(toolanswers.Links, "node1", "corosync-cfgtool", "-s")
	ask(toolanswers.AttributeNotSet, "node1", attribute("node1", "tnf-answers", "forever", query...)...)
	ask(toolanswers.TransientNotSet, "node1", attribute("node1", "tnf-answers", "reboot", query...)...)
	ask(toolanswers.PropertyNotSet, "node1", append([]string{"crm_attribute", "--type", "crm_config", "--name", "tnf-answers"}, query...)...)
	ask(toolanswers.AttributeOfUnknownNode, "node1", attribute("node9", "tnf-answers", "forever", query...)...)
	ask(toolanswers.DeleteNotSet, "node1", attribute("node1", "tnf-answers", "forever", "--delete")...)
	ask(toolanswers.DeleteTransientNotSet, "node1", attribute("node1", "tnf-answers", "reboot", "--delete")...)
	if out, err := c.run("node1", attribute("node1", "tnf-answers-set", "forever", "--update", "v1")...); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ask(toolanswers.AttributeSet, "node1", attribute("node1", "tnf-answers-set", "forever", query...)...)
	// pcmk's offline patch empties the sections it rewrites in a copy of the CIB; a CIB that never
	// had fencing levels has no such section.
	ask(toolanswers.SectionAbsent, "node1", "sh", "-c",
		`cibadmin --empty > /run/answers-cib.xml && CIB_file=/run/answers-cib.xml cibadmin --replace --scope fencing-topology --xml-text '<fencing-topology/>'`)

	c.power("cluster-stop", "node1")
	ask(toolanswers.AttributeWithoutCluster, "node1", attribute("node1", "tnf-answers", "forever", query...)...)
	ask(toolanswers.QuorumWithoutCorosync, "node1", "corosync-quorumtool", "-s")

	path := filepath.Join("..", "..", toolanswers.Dir, toolanswers.FileName(strings.Split(got.Versions, ";")[0]))
	if os.Getenv("TNF_UPDATE_ANSWERS") != "" {
		if err := toolanswers.Write(path, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("written: %s (%s)", path, got.Versions)
		return
	}
	_, kept, err := toolanswers.Load(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	want, ok := kept[filepath.Base(path)]
	if !ok {
		t.Fatalf("no answers kept for %s: make pacemaker-answers writes them (%s)", got.Versions, path)
	}
	for _, name := range slices.Sorted(maps.Keys(got.Answers)) {
		g, w := got.Answers[name], want.Answers[name]
		if g.Exit != w.Exit || g.Stderr != w.Stderr {
			t.Errorf("%s (%s): exit %d, %q; kept: exit %d, %q: make pacemaker-answers writes them again", name, strings.Join(g.Args, " "), g.Exit, g.Stderr, w.Exit, w.Stderr)
		}
	}
}

// ask runs argv inside node, as run does, and keeps its exit code and both outputs apart.
func (c *cluster) ask(node string, argv ...string) toolanswers.Answer {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, err := c.nodeCommand(ctx, node, argv...)
	if err != nil {
		c.t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	a := toolanswers.Answer{Args: argv}
	var ee *exec.ExitError
	if err := cmd.Run(); errors.As(err, &ee) {
		a.Exit = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	a.Stdout, a.Stderr = stdout.String(), stderr.String()
	return a
}
