//go:build integration

package cluster_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// haRoot is TNF_HA_ROOT: a Debian tree made by tools/ha-root (make ha-root-13) whose HA stack
// the nodes run instead of the host's; empty: the host's (Debian 12's). A tree without its list
// of versions is not one the tool finished.
func haRoot(t testing.TB) string {
	root := os.Getenv("TNF_HA_ROOT")
	if root == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "ha-stack.versions")); err != nil {
		t.Fatalf("TNF_HA_ROOT=%s: not a tree tools/ha-root/make-root.sh made (make ha-root-13): %v", root, err)
	}
	return root
}

// stackSuffix names the HA stack in a benchmark's name where the nodes run a tree's
// ("-pacemaker-3.0.0"), so that its rows stand beside the host stack's on the same page; "" on
// the host's.
func stackSuffix(t testing.TB) string {
	root := haRoot(t)
	if root == "" {
		return ""
	}
	version := stackVersions(t, root)["pacemaker"]
	if version == "" {
		t.Fatalf("%s/ha-stack.versions names no pacemaker", root)
	}
	return "-pacemaker-" + version
}

// stackVersions are the upstream versions of the HA stack's packages by name: the tree's list
// where root names one (make-root.sh writes it), else the host's dpkg.
func stackVersions(t testing.TB, root string) map[string]string {
	t.Helper()
	var list []byte
	var err error
	if root != "" {
		list, err = os.ReadFile(filepath.Join(root, "ha-stack.versions"))
	} else {
		list, err = exec.Command("dpkg-query", "-W", "-f", "${Package} ${Version}\n", "pacemaker", "corosync", "pcs").Output()
	}
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		pkg, version, _ := strings.Cut(line, " ")
		versions[pkg] = upstream(version)
	}
	return versions
}

// stackTools are how each package of the stack says its version when run, Pacemaker first.
var stackTools = []struct {
	pkg  string
	tool []string
}{
	{"pacemaker", []string{"pacemakerd", "--version"}},
	{"corosync", []string{"corosync", "-v"}},
	{"pcs", []string{"pcs", "--version"}},
}

// nodeTools are what the layer's agents run on a node beside the HA stack, each in RHCOS: a node
// whose /usr is a tree's must find them in it, or it runs a path of the layer without them (the
// connections to a fenced peer's etcd, ended with ss, would stay to the clients' timeouts).
var nodeTools = [][]string{{"ss", "-V"}}

// checkStack fails the test unless node runs the HA stack it should: the tree's where the node
// has one, else the host's. Each tool is run inside the node and must say its package's upstream
// version, as the tree's list (or the host's dpkg) gives it. It returns what the tools said, in
// stackTools' order ("Pacemaker 3.0.0; Corosync Cluster Engine, version '3.1.9'; 0.12.0.2").
func (c *cluster) checkStack(node string) string {
	c.t.Helper()
	versions := stackVersions(c.t, c.layout.Nodes[node].HARoot)
	var said []string
	for _, st := range stackTools {
		out, err := c.run(node, st.tool...)
		out = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
		if err != nil || versions[st.pkg] == "" || !strings.Contains(out, versions[st.pkg]) {
			c.t.Fatalf("%s: %s says %q (%v), want %s's %q", node, strings.Join(st.tool, " "), out, err, st.pkg, versions[st.pkg])
		}
		said = append(said, out)
	}
	for _, tool := range nodeTools {
		if out, err := c.run(node, tool...); err != nil {
			c.t.Fatalf("%s: %s: %v\n%s", node, strings.Join(tool, " "), err, out)
		}
	}
	return strings.Join(said, "; ")
}

// upstream is a Debian package version without its epoch and Debian revision (1:3.0.0-3 → 3.0.0).
func upstream(version string) string {
	if _, v, ok := strings.Cut(version, ":"); ok {
		version = v
	}
	if i := strings.LastIndex(version, "-"); i > 0 {
		version = version[:i]
	}
	return version
}
