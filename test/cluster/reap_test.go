//go:build integration

package cluster_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ownerFile, in a cluster's folder, holds the PID of the test process that made the cluster.
const ownerFile = "owner"

// reapAbandoned powers off the nodes and the BMC emulator of every cluster whose test process has
// ended, and deletes their namespaces. A go test timeout panics without running any cleanup, so
// its clusters (Corosync, Pacemaker, etcd, kube-apiserver, the emulator) would keep running and
// load the next run's scenarios. A live owner's clusters are left alone (another run beside this
// one); a reaped cluster's folder stays, as its evidence, without its owner file.
func reapAbandoned() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "tnf-cluster-*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || running(pid) {
			continue
		}
		id := clusterID(dir)
		// The BMC emulator first: it must start no power action (a fencing's power-on) while
		// the nodes go.
		if out, err := exec.Command("ip", "netns", "pids", id+"-bmc").Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				// This process may be listed too: dial's goroutine, if it ran on the main thread,
				// leaves that thread wedged in the namespace, and the list goes by the main
				// thread's.
				if p, err := strconv.Atoi(f); err == nil && p > 0 && p != os.Getpid() {
					_ = unix.Kill(p, unix.SIGKILL)
				}
			}
		}
		// Every node off before deleteNamespaces. A node that would not go off keeps the owner
		// file, for the next run to try again.
		stopped := true
		if l, err := readLayout(dir); err == nil {
			for _, n := range l.Nodes {
				if err := n.powerOff(); err != nil {
					stopped = false
					fmt.Fprintf(os.Stderr, "cluster harness: stopping the cluster of ended test process %d in %s: %v\n", pid, dir, err)
				}
			}
		}
		if !stopped {
			continue
		}
		deleteNamespaces(id)
		_ = os.Remove(filepath.Join(dir, ownerFile))
		fmt.Fprintf(os.Stderr, "cluster harness: stopped the cluster of ended test process %d (its folder kept: %s)\n", pid, dir)
	}
}

// running says whether a process with pid exists (one of another user's answers EPERM).
func running(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// clusterID is the prefix of a cluster's namespaces, from its folder's name: never reused by a
// later cluster, so a late power action finds nothing of another cluster.
func clusterID(dir string) string {
	return "tnf" + strings.TrimPrefix(filepath.Base(dir), "tnf-cluster-")
}

// namespacesOf are the network namespaces of the cluster whose ID is id (clusterID), found by
// their names: a test process that ended before writing its layout left some too.
func namespacesOf(id string) ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, _ := strings.Cut(line, " "); strings.HasPrefix(name, id+"-") {
			names = append(names, name)
		}
	}
	return names, err
}

// deleteNamespaces deletes the network namespaces of the cluster whose ID is id, once its nodes
// are off: deleting one takes the cluster link's other end out of the peer's.
func deleteNamespaces(id string) {
	names, _ := namespacesOf(id)
	for _, name := range names {
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
}

// TestAbandonedClusterStopped: a cluster whose test process has ended (here: its owner file
// names a process that exited) is stopped by the next run's start: its booted node's processes,
// its BMC emulator and its namespaces are gone, and the owner file with them.
func TestAbandonedClusterStopped(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	c.power("on", "node1")
	n := c.layout.Nodes["node1"]
	c.waitFor("node1's Corosync", time.Minute, func() (bool, string) {
		corosync := c.nodeProcesses("node1", func(exe, _ string) bool { return filepath.Base(exe) == "corosync" })
		return len(corosync) > 0, fmt.Sprint(n.processes())
	})
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	c.write(filepath.Join(c.dir, ownerFile), []byte(strconv.Itoa(ended.Process.Pid)), 0o644)

	before := n.processes()
	if len(before) == 0 {
		t.Fatal("node1 runs nothing")
	}
	reapAbandoned()
	for _, pid := range append(before, c.emuPID) {
		if !waitGone(pid, 10*time.Second) {
			t.Fatalf("process %d of the cluster (node1's %v, the BMC emulator %d) still runs", pid, before, c.emuPID)
		}
	}
	// The reaper did the teardown's work: nothing is left for it to stop.
	c.emuPID = 0
	c.layout.Nodes = map[string]nodeSetup{}
	if left, err := namespacesOf(clusterID(c.dir)); err != nil || len(left) > 0 {
		t.Fatalf("namespaces left: %v (%v)", left, err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, ownerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("owner file: %v, want it removed", err)
	}
}
