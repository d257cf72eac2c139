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

// ocf11DTD is resource-agents' ra-api-1.dtd with what OCF 1.1 adds to the meta-data, which
// that DTD predates (resource-agents never extended it): the reload-agent action and a
// parameter's reloadable attribute. The agent's meta-data says it follows 1.1, and Pacemaker
// reloads a parameter only for an agent that advertises both.
func ocf11DTD(t *testing.T) []byte {
	t.Helper()
	dtd, err := os.ReadFile("/usr/share/resource-agents/ra-api-1.dtd")
	if err != nil {
		t.Fatalf("resource-agents' DTD: %v", err)
	}
	s := string(dtd)
	for _, change := range [][2]string{{"|reload|", "|reload|reload-agent|"}, {`unique  (1|0)   "0">`, `unique  (1|0)   "0"` + "\n        reloadable (1|0) \"0\">"}} {
		if !strings.Contains(s, change[0]) {
			t.Fatalf("resource-agents' DTD has no %q to extend to OCF 1.1", change[0])
		}
		s = strings.Replace(s, change[0], change[1], 1)
	}
	return []byte(s)
}

// ocfTester is resource-agents' ocf-tester with its meta-data check against ocf11DTD: a copy
// of the script whose data folder (where it finds ra-api-1.dtd) is a temporary one.
func ocfTester(t *testing.T) string {
	t.Helper()
	script, err := os.ReadFile("/usr/sbin/ocf-tester")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if !strings.Contains(string(script), "\nDATADIR=/usr/share\n") {
		t.Fatal("ocf-tester no longer sets DATADIR=/usr/share: its DTD cannot be replaced")
	}
	script = []byte(strings.Replace(string(script), "\nDATADIR=/usr/share\n", "\nDATADIR="+dir+"\n", 1))
	if err := os.MkdirAll(filepath.Join(dir, "resource-agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resource-agents", "ra-api-1.dtd"), ocf11DTD(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tester := filepath.Join(dir, "ocf-tester")
	if err := os.WriteFile(tester, script, 0o755); err != nil {
		t.Fatal(err)
	}
	return tester
}

// TestOCFTester runs resource-agents' ocf-tester (ocfTester) against the agent with the exec
// runtime.
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
	out, err := exec.Command(ocfTester(t), args...).CombinedOutput()
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

// TestMetaDataValidates checks the meta-data against resource-agents' ra-api-1.dtd as OCF 1.1
// extends it (ocf11DTD), and that every parameter has a description and a default attribute.
func TestMetaDataValidates(t *testing.T) {
	md, err := exec.Command(testbin.Path(t, "ocf-etcd"), "meta-data").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ra-api-1.dtd": ocf11DTD(t), "md.xml": md} {
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
	for _, action := range []string{"start", "stop", "monitor", "promote", "demote", "notify", "reload-agent", "validate-all", "meta-data"} {
		if !strings.Contains(s, `<action name="`+action+`"`) {
			t.Errorf("meta-data does not advertise %s", action)
		}
	}
}
