//go:build integration

package etcdagent_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

// TestOCFTester runs resource-agents' ocf-tester against the agent with the exec runtime.
func TestOCFTester(t *testing.T) {
	c := newCluster(t)
	n := c.nodes["node1"]
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// ocf-tester passes no node name, so the agent uses the host name, as Pacemaker would.
	n.params["node_ip_map"] = host + ":" + n.ip + ";" + "peer:" + c.nodes["node2"].ip
	args := []string{"-n", "etcd"}
	for k, v := range n.params {
		args = append(args, "-o", k+"="+v)
	}
	args = append(args, worldReadableCopy(t, testbin.Dir(t), "ocf-etcd", "tnf-etcd-agent"))
	out, err := exec.Command("ocf-tester", args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "passed all tests") {
		t.Fatalf("ocf-tester: %v\n%s", err, out)
	}
	n.kill(9)
}

// worldReadableCopy copies the agent's binaries where any user can run them (ocf-tester checks
// the agent's permissions by running it as nobody, and the checkout may sit in a private
// directory) and returns the path of the first.
func worldReadableCopy(t *testing.T, from string, names ...string) string {
	dir, err := os.MkdirTemp("", "ocf-tester-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, names[0])
}

// TestMetaDataValidates checks the meta-data against resource-agents' ra-api-1.dtd and that
// every parameter has a description and a default attribute.
func TestMetaDataValidates(t *testing.T) {
	md, err := exec.Command(testbin.Path(t, "ocf-etcd"), "meta-data").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dtd, err := os.ReadFile("/usr/share/resource-agents/ra-api-1.dtd")
	if err != nil {
		t.Fatalf("resource-agents' DTD: %v", err)
	}
	for name, data := range map[string][]byte{"ra-api-1.dtd": dtd, "md.xml": md} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("xmllint", "--noout", "--valid", filepath.Join(dir, "md.xml")).CombinedOutput(); err != nil {
		t.Fatalf("meta-data is not valid against ra-api-1.dtd: %v\n%s", err, out)
	}
	s := string(md)
	if got := strings.Count(s, "<parameter "); got != strings.Count(s, "<longdesc")-1 || got != strings.Count(s, `default="`) {
		t.Errorf("%d parameters, but descriptions or defaults are missing:\n%s", got, s)
	}
	for _, action := range []string{"start", "stop", "monitor", "promote", "demote", "notify", "validate-all", "meta-data"} {
		if !strings.Contains(s, `<action name="`+action+`"`) {
			t.Errorf("meta-data does not advertise %s", action)
		}
	}
}
