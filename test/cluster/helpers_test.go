//go:build integration

package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prometheus/procfs"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

var bothPromoted = map[string]string{"node1": "Promoted", "node2": "Promoted"}

// up boots both nodes and waits until etcd is promoted on both.
func (c *cluster) up() {
	c.t.Helper()
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitRoles("node1", bothPromoted)
}

// upAndWriting boots both nodes, waits until both are promoted and starts a writer that
// etcd acknowledges.
func (c *cluster) upAndWriting() *writer {
	c.t.Helper()
	c.up()
	return c.writing()
}

// writing starts a writer and waits until etcd acknowledges its writes.
func (c *cluster) writing() *writer {
	c.t.Helper()
	w := c.startWriter()
	c.waitWrites(w, "both up")
	return w
}

// waitFenced waits until by's fencing history shows target fenced exactly n times.
func (c *cluster) waitFenced(by, target string, n int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%s fenced %s (%d)", by, target, n), settle, func() (bool, string) {
		got, err := c.fencesSeen(by, target)
		return err == nil && got == n, fmt.Sprintf("%d times (%v)", got, err)
	})
}

// powerBackOn powers on a node that lost its power once its fencing is done: the first fencing
// level proves it off and leaves it off, so someone turns it on, as an administrator would.
func (c *cluster) powerBackOn(node string) {
	c.t.Helper()
	c.power("on", node)
}

// hang freezes every process of node (SIGSTOP): a node hung with its power on. Its fencing's
// power cut ends it (SIGKILL reaches stopped processes).
func (c *cluster) hang(node string) {
	c.t.Helper()
	for _, pid := range c.layout.Nodes[node].processes() {
		_ = unix.Kill(pid, unix.SIGSTOP)
	}
	c.t.Logf("%s: hung (every process stopped)", node)
}

// waitBooted waits until node is powered on again (by the fence's reboot).
func (c *cluster) waitBooted(node string) {
	c.t.Helper()
	c.waitFor(node+" booted again", settle, func() (bool, string) { return c.layout.Nodes[node].holder() > 0, "" })
}

// fences counts the successful fencing actions against target in node's fencing history.
func (c *cluster) fences(node, target string) int {
	c.t.Helper()
	n, err := c.fencesSeen(node, target)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// fencesSeen is fences, with an error where status could not be read (a moment's crm_mon
// failure on a busy node), for a wait to look again.
func (c *cluster) fencesSeen(node, target string) (int, error) {
	_, st, err := c.status(node)
	if err != nil || st == nil {
		return 0, fmt.Errorf("status on %s: %v", node, err)
	}
	return st.Fencing.Successes(target), nil
}

// waitFencedAgain waits until by's fencing history shows target fenced more than before times.
func (c *cluster) waitFencedAgain(by, target string, before int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%s fenced %s (more than %d)", by, target, before), settle, func() (bool, string) {
		n, err := c.fencesSeen(by, target)
		return err == nil && n > before, fmt.Sprint(n, err)
	})
}

// assertFenced checks how many times each node was fenced, in from's fencing history.
func (c *cluster) assertFenced(from string, want map[string]int) {
	c.t.Helper()
	for target, n := range want {
		if got := c.fences(from, target); got != n {
			c.t.Fatalf("%s was fenced %d times, want %d", target, got, n)
		}
	}
}

// assertInert checks that node runs none of cri-o, kubelet and etcd: Pacemaker shows them
// stopped there and no process of the node is the etcd binary or a stand-in.
func (c *cluster) assertInert(node string) {
	c.t.Helper()
	m, st, err := c.status(node)
	if err != nil || st == nil {
		c.t.Fatalf("status on %s: %v", node, err)
	}
	if m.Quorate {
		c.t.Fatalf("%s is quorate alone", node)
	}
	for _, r := range st.Resources {
		if r.Node == node && r.Role != "Stopped" {
			c.t.Fatalf("%s: %s is %s on a node that should be inert", node, r.ID, r.Role)
		}
	}
	if pids := c.nodeProcesses(node, func(exe, cmdline string) bool { return c.isEtcd(exe) || isStandIn(cmdline) }); len(pids) > 0 {
		c.t.Fatalf("%s runs etcd or a stand-in (pids %v) while it should be inert", node, pids)
	}
}

// stayInert waits until node's Pacemaker answers, then checks the node stays inert for d.
func (c *cluster) stayInert(node string, d time.Duration) {
	c.t.Helper()
	c.waitFor(node+"'s Pacemaker answers", settle, func() (bool, string) {
		_, st, err := c.status(node)
		return err == nil && st != nil, fmt.Sprint(err)
	})
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(2 * time.Second) {
		c.assertInert(node)
	}
	c.t.Logf("%s stayed inert for %v", node, d)
}

// crashBoth cuts both nodes' power at once.
func (c *cluster) crashBoth() {
	c.t.Helper()
	done := make(chan error, len(c.nodes))
	for _, n := range c.nodes {
		go func() { done <- c.layout.Nodes[n].powerOff() }()
	}
	for range c.nodes {
		if err := <-done; err != nil {
			c.t.Fatal(err)
		}
	}
	c.t.Log("both nodes crashed")
}

// link sets the cluster link up or down (on node1's side: the veth pair loses carrier).
func (c *cluster) link(state string) {
	c.t.Helper()
	c.inNS(c.layout.Nodes["node1"].NetNS, "ip", "link", "set", "cl", state)
	c.t.Logf("cluster link %s", state)
}

// faults sets the BMC emulator's fault injection.
func (c *cluster) faults(jsonBody string) {
	c.t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return c.dial(c.bmcNS, bmcIP+":"+adminPort)
		}}}
	req, _ := http.NewRequest(http.MethodPut, "http://"+bmcIP+":"+adminPort+"/faults", bytes.NewBufferString(jsonBody))
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		c.t.Fatalf("faults %s: %s", jsonBody, resp.Status)
	}
}

func (c *cluster) password(node string) string {
	data, err := os.ReadFile(filepath.Join(c.dir, "bmc", node+".password"))
	if err != nil {
		c.t.Fatal(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

// standInPID is the PID of node's stand-in for resource (crio or kubelet), 0 when none runs.
func (c *cluster) standInPID(node, resource string) int {
	out, err := c.run(node, "cat", "/run/tnf-standin/"+resource+".pid")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	if pid <= 0 || !isStandIn(readFile(fmt.Sprintf("/proc/%d/cmdline", pid))) {
		return 0
	}
	return pid
}

// isStandIn tells a stand-in's process by its command line: testdata/standin runs
// "sleep 1000000" (the node's namespace holder is "sleep infinity").
func isStandIn(cmdline string) bool { return strings.Contains(cmdline, "1000000") }

func (c *cluster) isEtcd(exe string) bool {
	// On the field's stack etcd runs from its image's root file system, in the node's storage.
	return exe == testbin.Etcd(c.t) || c.field() && strings.HasSuffix(exe, "/usr/local/bin/etcd")
}

// etcdPIDs are node's etcd processes.
func (c *cluster) etcdPIDs(node string) []int {
	return c.nodeProcesses(node, func(exe, _ string) bool { return c.isEtcd(exe) })
}

// nodeProcesses are node's processes whose executable and command line match.
func (c *cluster) nodeProcesses(node string, match func(exe, cmdline string) bool) []int {
	var pids []int
	for _, pid := range c.layout.Nodes[node].processes() {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if match(exe, readFile(fmt.Sprintf("/proc/%d/cmdline", pid))) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signal sends sig to one of node's processes, found by PID.
func (c *cluster) signal(node string, pid int, sig unix.Signal) {
	c.t.Helper()
	if pid <= 0 {
		c.t.Fatalf("%s: no process to send %v to", node, sig)
	}
	if err := unix.Kill(pid, sig); err != nil {
		c.t.Fatalf("%s: %v to %d: %v", node, sig, pid, err)
	}
	c.t.Logf("%s: %v sent to pid %d", node, sig, pid)
}

// assertStartedAfter checks that the processes later started after first (the start order at
// boot), by their start times.
func (c *cluster) assertStartedAfter(node string, first int, firstName string, later []int, laterName string) {
	c.t.Helper()
	t0 := startTicks(first)
	if t0 == 0 || len(later) == 0 {
		c.t.Fatalf("%s: no %s (pid %d) or no %s (%v)", node, firstName, first, laterName, later)
	}
	for _, pid := range later {
		if t := startTicks(pid); t < t0 {
			c.t.Fatalf("%s: %s (pid %d) started before %s (pid %d)", node, laterName, pid, firstName, first)
		}
	}
}

// startTicks is a process's start time in clock ticks after boot (0 if it is gone).
func startTicks(pid int) uint64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.Starttime
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// lastLineWith is text's last line that holds s, or "" (a diagnosis for a wait's message).
func lastLineWith(text, s string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}
