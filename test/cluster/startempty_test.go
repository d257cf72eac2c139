//go:build integration

package cluster_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// giveUpID is the served cluster's ID as tnfctl status names it in the command to give it up.
var giveUpID = regexp.MustCompile(`tnfctl start-empty --give-up ([0-9a-f]+)`)

// TestStartEmpty: operate.md's "Both nodes without data". The site loses its power and neither
// node's etcd data disk comes back (here: both data dirs moved away while the nodes are off). The
// agents refuse to create an empty cluster in place of the one this cluster served, and tnfctl
// status names its ID. start-empty typed as the page writes it, at a terminal: another ID is
// refused; the named ID, answered yes, is given up, and the nodes form a new cluster that takes
// writes on both members.
func TestStartEmpty(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	w.Stop()
	c.crashBoth()
	for _, n := range c.nodes {
		data := c.layout.Nodes[n].path("disk", "var-lib", "etcd")
		if err := os.Rename(data, data+".not-mounted"); err != nil {
			t.Fatal(err)
		}
	}
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitState("node1", "blocked")
	out, _, err := c.statusRun("node1")
	m := giveUpID.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("tnfctl status on node1 names no served cluster to give up: %v\n%s", err, out)
	}
	served := m[1]
	t.Logf("tnfctl status on node1 with no data on either node:\n%s", out)

	tnfctl := c.tnfctlPath("node1")
	// Another ID: the served one with its last digit changed.
	other := served[:len(served)-1] + "0"
	if other == served {
		other = served[:len(served)-1] + "1"
	}
	if out, err := c.atTerminal("node1", "yes", tnfctl, "start-empty", "--give-up", other); err == nil || !strings.Contains(out, "this cluster served etcd cluster "+served) {
		t.Fatalf("start-empty --give-up with another cluster's ID: %v, want a refusal naming %s\n%s", err, served, out)
	}
	if out, _, err := c.statusRun("node1"); err != nil || !strings.Contains(out, served) {
		t.Fatalf("after the refused start-empty, tnfctl status on node1 no longer names %s: %v\n%s", served, err, out)
	}
	out, err = c.atTerminal("node1", "yes", tnfctl, "start-empty", "--give-up", served)
	if err != nil || !strings.Contains(out, "Give up etcd cluster "+served+" and everything stored in it? Type yes to confirm:") {
		t.Fatalf("start-empty --give-up %s, answered yes: %v\n%s", served, err, out)
	}
	t.Logf("start-empty --give-up %s, answered yes:\n%s", served, out)
	c.waitRoles("node1", bothPromoted)
	w2 := c.writing()
	c.stopAndCheck(w2)
}
