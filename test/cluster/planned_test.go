//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/test/logline"
)

// Planned stops (modelled on the field's two-node recovery suite): each costs the cluster no
// fencing, no forced cluster and no acknowledged write; both end Promoted with the same data.

// TestGracefulReboot: each node reboots cleanly twice, once while its etcd member leads and
// once while it follows: it leaves the member list before its etcd stops (handing leadership
// over first when it leads), the other serves on alone, and the node comes back as a learner
// and is promoted.
func TestGracefulReboot(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	for _, node := range c.nodes {
		for _, role := range []string{"leader", "follower"} {
			c.makeRole(node, role)
			c.reboot(w, node)
		}
	}
	c.stopAndCheck(w)
	c.assertPlanned()
}

// TestSequentialGracefulReboot: node1 reboots cleanly; as soon as both are Promoted again,
// node2 does (its leave waits for etcd's check that the returned member has been connected
// for five seconds, instead of failing).
func TestSequentialGracefulReboot(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	c.reboot(w, "node1")
	c.reboot(w, "node2")
	c.stopAndCheck(w)
	c.assertPlanned()
}

// TestBothGraceful: the cluster stack stops on both nodes at once (a `pcs cluster stop --all`:
// the nodes stay up, their /run with them), then starts again; then both nodes reboot cleanly
// at once (a site shutdown). Each time exactly one leaves, the other stops as the last voter,
// and the cluster forms again from the last voter's data with no admin step.
func TestBothGraceful(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	for _, how := range []struct{ stop, start string }{{"cluster-stop", "cluster-start"}, {"shutdown", "on"}} {
		before := c.agentLogSizes()
		c.both(how.stop)
		c.both(how.start)
		c.waitRoles("node1", bothPromoted)
		c.waitWrites(w, "both back after "+how.stop)
		round := c.agentLogsSince(before)
		// The last voter either waited for its peer's leave, or found it already done.
		left := strings.Count(round, "left the member list")
		last := strings.Count(round, "stopping as the last voter") + strings.Count(round, "the last voter never removes itself")
		if left != 1 || last != 1 {
			t.Errorf("%s on both: %d left and %d stayed the last voter, want one each; the stop decisions:\n%s",
				how.stop, left, last, logline.Grep(round, "stop decision", "member list", "last voter", "graceful leave"))
		}
	}
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}

// TestStandby: `pcs node standby` of node2 (maintenance) demotes and stops its etcd after it
// left; node1 serves on; `pcs node unstandby` brings it back.
func TestStandby(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	began := time.Now()
	c.pcs("node1", "node", "standby", "node2")
	c.waitRoles("node1", map[string]string{"node1": "Promoted", "node2": "Stopped"})
	c.waitWrites(w, "node2 in standby")
	c.pcs("node1", "node", "unstandby", "node2")
	c.waitRoles("node1", bothPromoted)
	c.waitWrites(w, "node2 back")
	t.Logf("longest write gap through standby and back: %v", w.LongestGap(began, time.Now()).Round(time.Millisecond))
	c.stopAndCheck(w)
	c.assertPlanned()
}

// onlyInClusterTest skips a scenario outside `make cluster-test` (TNF_CLUSTER_SET=all), which
// runs every scenario: make test and CI keep within their time.
func onlyInClusterTest(t *testing.T) {
	if os.Getenv("TNF_CLUSTER_SET") != "all" {
		t.Skip("runs in make cluster-test (TNF_CLUSTER_SET=all)")
	}
}

// reboot reboots node cleanly and waits until both are Promoted again; it returns (and logs)
// the longest gap between acknowledged writes meanwhile.
func (c *cluster) reboot(w *writer, node string) time.Duration {
	c.t.Helper()
	return c.rebootChanging(w, node, func() {})
}

// rebootChanging is reboot with change made while node is off: an update of its image.
func (c *cluster) rebootChanging(w *writer, node string, change func()) time.Duration {
	c.t.Helper()
	began := time.Now()
	c.power("shutdown", node)
	c.waitWrites(w, node+" away")
	change()
	c.power("on", node)
	c.waitBothServing(c.other(node))
	c.waitWrites(w, node+" back")
	gap := w.LongestGap(began, time.Now())
	c.t.Logf("%s rebooted cleanly in %v; longest write gap %v", node, time.Since(began).Round(time.Second), gap.Round(time.Millisecond))
	return gap
}

// both runs a power action on both nodes at once.
func (c *cluster) both(action string) {
	c.t.Helper()
	done := make(chan struct{}, len(c.nodes))
	for _, n := range c.nodes {
		go func() {
			defer func() { done <- struct{}{} }()
			c.power(action, n)
		}()
	}
	for range c.nodes {
		<-done
	}
}

func (c *cluster) other(node string) string {
	if node == "node1" {
		return "node2"
	}
	return "node1"
}

// makeRole makes node's etcd member the leader or a follower, moving the leadership if needed.
func (c *cluster) makeRole(node, role string) {
	c.t.Helper()
	leader := c.etcdLeader()
	if (leader == node) == (role == "leader") {
		return
	}
	target := node
	if role == "follower" {
		target = c.other(node)
	}
	targetCli := c.etcdClient(target)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := targetCli.Status(ctx, c.etcdURL(target))
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.etcdClient(leader).MoveLeader(ctx, st.Header.MemberId); err != nil {
		c.t.Fatalf("moving etcd's leadership to %s: %v", target, err)
	}
	c.t.Logf("etcd's leadership moved to %s", target)
}

// etcdLeader is the node whose etcd member leads.
func (c *cluster) etcdLeader() string {
	c.t.Helper()
	for _, n := range c.nodes {
		cli := c.etcdClient(n)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		st, err := cli.Status(ctx, c.etcdURL(n))
		cancel()
		if err != nil {
			c.t.Fatalf("%s: %v", n, err)
		}
		if st.Leader == st.Header.MemberId {
			return n
		}
	}
	c.t.Fatal("no etcd member leads")
	return ""
}

func (c *cluster) pcs(node string, args ...string) {
	c.t.Helper()
	if out, err := c.run(node, append([]string{"pcs"}, args...)...); err != nil {
		c.t.Fatalf("pcs %s on %s: %v\n%s", strings.Join(args, " "), node, err, out)
	}
	c.t.Logf("pcs %s", strings.Join(args, " "))
}

// agentLogs is what the etcd agent logged on both nodes (Pacemaker's log keeps its output).
// pacemakerLog is the path of node's Pacemaker log, which holds the etcd agent's lines too.
func (c *cluster) pacemakerLog(node string) string {
	return filepath.Join(c.dir, node, "disk", "var-log", "pacemaker", "pacemaker.log")
}

func (c *cluster) agentLogs() string { return c.agentLogsSince(nil) }

// agentLogsSince is what the agent logged on each node after the given sizes of its log.
func (c *cluster) agentLogsSince(from map[string]int) string {
	var b strings.Builder
	for _, n := range c.nodes {
		log := readFile(c.pacemakerLog(n))
		b.WriteString(log[min(from[n], len(log)):])
	}
	return b.String()
}

// agentLogSizes are the sizes of the nodes' logs now, for agentLogsSince.
func (c *cluster) agentLogSizes() map[string]int {
	sizes := map[string]int{}
	for _, n := range c.nodes {
		sizes[n] = len(readFile(c.pacemakerLog(n)))
	}
	return sizes
}

// assertPlanned checks what a planned stop must cost: nobody fenced, nothing forced.
func (c *cluster) assertPlanned() {
	c.t.Helper()
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
	if n := strings.Count(c.agentLogs(), "forcing a new cluster of one"); n > 0 {
		c.t.Fatalf("a planned stop forced a cluster %d times", n)
	}
	if !strings.Contains(c.agentLogs(), "left the member list") {
		c.t.Fatal(fmt.Errorf("no graceful leave in the agents' logs"))
	}
}

// TestGracefulThenUngraceful: node2 reboots cleanly (it left) and node1 serves alone; then
// node1's power is cut while node2 is away. node2 boots alone and stays inert; after
// confirm-peer-down it still refuses to lead from the data it had when it left (older than
// what node1 served since), and tnfctl status says why. When node1 returns, its data leads and
// node2 joins: nothing acknowledged is lost.
func TestGracefulThenUngraceful(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	c.olderDataAlone(w)
	c.power("on", "node1")
	c.waitRoles("node1", bothPromoted)
	c.stopAndCheck(w)
	c.assertFenced("node2", map[string]int{"node2": 0})
}

// olderDataAlone: node2 shuts down gracefully (it leaves), node1 takes writes alone, node1's
// power is cut and node2 comes back alone: it stays inert, and after confirm-peer-down it still
// refuses to lead from its older data, and tnfctl status says why.
func (c *cluster) olderDataAlone(w *writer) {
	c.t.Helper()
	c.power("shutdown", "node2")
	c.waitWrites(w, "node1 alone after node2 left")
	c.power("off", "node1")
	c.power("on", "node2")
	c.stayInert("node2", 15*time.Second)
	if out, err := c.tnfctl("node2", "confirm-peer-down", "--yes"); err != nil {
		c.t.Fatalf("confirm-peer-down --yes: %v\n%s", err, out)
	}
	const why = "etcd on node2: refuse: the local member left its cluster"
	c.waitFor("tnfctl status on node2 says why etcd does not lead", settle, func() (bool, string) {
		out, _, err := c.statusRun("node2")
		return err == nil && strings.Contains(out, why), out
	})
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Second) {
		if _, st, err := c.status("node2"); err == nil && st.Role("etcd", "node2") == "Promoted" {
			c.t.Fatal("node2 leads from the data it had when it left")
		}
	}
}

// TestAcceptDataLoss: as TestGracefulThenUngraceful, but node1 is gone for good. The
// administrator runs tnfctl accept-data-loss on node2: it refuses while node1 is a Corosync
// member and, without --yes, without a terminal; at a terminal it names the writes given up and
// asks; answered yes, node2 leads from the data it had when it left (every write acknowledged
// before node2's shutdown began is there; node1's later ones are not). When node1 does come back,
// its data is moved aside and it joins node2's cluster. Through the API, as its clients see it: a writer
// through node1's API server, an informer through node2's; after accept-data-loss node2's API
// serves every object acknowledged before node2 left and none of the later ones, its
// resourceVersions jumped past etcddata.RevisionBump, and the informer listed again.
func TestAcceptDataLoss(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newAPICluster(t, nil)
	w := c.upWithAPIAndWriting()
	informer := c.watchAPI("node2")
	apiWrites := c.startAPIWriter("loss", "node1")
	c.waitWrites(apiWrites.writer, "both up, through node1's API")
	if out, err := c.tnfctl("node2", "accept-data-loss", "--yes"); err == nil || !strings.Contains(out, "live Corosync member") {
		t.Fatalf("accept-data-loss --yes while node1 is a member: %v\n%s", err, out)
	}
	before, apiBefore := w.Acked(), apiWrites.Acked()
	c.olderDataAlone(w)
	acked := w.Stop() // node1 is off: nothing more is acknowledged
	apiAcked := apiWrites.Stop()

	if out, err := c.tnfctl("node2", "accept-data-loss"); err == nil || !strings.Contains(out, "pass --yes") {
		t.Fatalf("accept-data-loss without --yes and without a terminal: %v\n%s", err, out)
	}
	out, err := c.atTerminal("node2", "yes", c.tnfctlPath("node2"), "accept-data-loss")
	if err != nil || !strings.Contains(out, "node1 accepted after raft index") || !strings.Contains(out, "Give up node1's data? Type yes to confirm:") {
		t.Fatalf("accept-data-loss at a terminal, answered yes: %v\n%s", err, out)
	}
	t.Logf("accept-data-loss on node2, answered yes at a terminal:\n%s", out)
	c.waitRoles("node2", map[string]string{"node2": "Promoted"})
	// Checked before a new writer reuses the same keys; node1 later holds what node2 holds
	// (stopAndCheck compares their revisions and hashes).
	c.checkAcked(before, "node2")
	t.Logf("writes given up: %d of the %d acknowledged after node2's shutdown began",
		c.missing(acked[len(before):], "node2"), len(acked)-len(before))
	c.waitAPIReady("node2")
	c.checkAPIAfterLoss(apiWrites, apiBefore, apiAcked[len(apiBefore):], informer)
	w2 := c.startWriter()
	c.waitWrites(w2, "node2 leads from its own data")
	c.power("on", "node1")
	c.waitRoles("node1", bothPromoted)
	c.stopAndCheck(w2)
	c.assertFenced("node2", map[string]int{"node2": 0})
}

// checkAPIAfterLoss checks node2's API after accept-data-loss: every object acknowledged before
// node2 left (kept) is there and none acknowledged after (lost), the list's resourceVersion is
// past the restore's bump, and informer, through node2's API since before it left, listed again.
func (c *cluster) checkAPIAfterLoss(writer *apiWriter, kept, lost []string, informer *apiWatcher) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.apiClient("node2").CoreV1().ConfigMaps(apiNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	there := map[string]bool{}
	for _, cm := range list.Items {
		there[cm.Name] = true
	}
	for _, key := range kept {
		if !there[writer.object(key)] {
			c.t.Errorf("%s, acknowledged before node2 left, is not in node2's API after accept-data-loss", writer.object(key))
		}
	}
	back := 0
	for _, key := range lost {
		if there[writer.object(key)] {
			back++
		}
	}
	rv, _ := strconv.ParseUint(list.ResourceVersion, 10, 64)
	if rv <= etcddata.RevisionBump {
		c.t.Errorf("node2's API lists at resourceVersion %d after accept-data-loss, want past the restore's bump %d", rv, etcddata.RevisionBump)
	}
	c.waitFor("node2's informer listed again", time.Minute, func() (bool, string) {
		return informer.relists() >= 1, fmt.Sprintf("%d relists", informer.relists())
	})
	c.t.Logf("node2's API after accept-data-loss: %d objects kept, %d of the %d acknowledged through node1 alone still there, resourceVersion %d; node2's informer relisted %d times",
		len(kept), back, len(lost), rv, informer.relists())
}

// TestBMCCredentialRotation: both BMC passwords change, at the BMCs and in each node's
// configuration; running setup again on each node (what the node disruption policy does, no
// reboot) puts the new ones where the fencer reads them. A fencing afterwards succeeds with the
// new password, and the old ones are gone from the nodes.
func TestBMCCredentialRotation(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	old := map[string]string{}
	for _, n := range c.nodes {
		old[n] = c.password(n)
		pw := []byte(bmcPassword() + "\n")
		c.write(filepath.Join(c.dir, "bmc", n+".password"), pw, 0o600)
		for _, on := range c.nodes {
			c.write(filepath.Join(c.layout.Nodes[on].Dir, "disk", "etc", "tnf", "secrets", n+".password"), pw, 0o600)
		}
	}
	c.restartEmulator()
	for _, n := range c.nodes {
		out, err := c.tnfctl(n, "setup", "--wait", "1m")
		// The fence race winner checks both BMCs with the new passwords before anything else.
		if err != nil || (n == "node1" && strings.Count(out, "fence_tnf_redfish: ok") != 2) ||
			strings.Count(out, "restarted with its new password")+strings.Count(out, "failures cleaned up") < 2 { // both levels fencing the peer run here
			t.Fatalf("setup again on %s: %v\n%s", n, err, out)
		}
		t.Logf("setup again on %s:\n%s", n, out)
	}
	c.waitWrites(w, "after the rotation")
	c.power("off", "node2")
	c.waitFenced("node1", "node2", 1)
	c.waitWrites(w, "node1 alone")
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)
	c.stopAndCheck(w)
	for _, n := range c.nodes {
		for _, pw := range old {
			if out, err := c.run(n, "grep", "-rlF", pw, "/etc/tnf", "/var/lib/pacemaker"); err == nil {
				t.Errorf("%s still holds an old BMC password in %s", n, strings.TrimSpace(out))
			}
		}
	}
}

// TestNodeReplacement: node2's hardware dies (node1 fences it and serves alone) and a new machine
// with the same name and the same node configuration takes its place: nothing of the old one's
// state (etcd data, CIB, Corosync files, /var/lib/tnf). It boots, runs setup, joins the running
// cluster, its etcd joins as a learner and is promoted. Then the same for node1, the fence race
// winner, whose setup must leave the live configuration as it is.
func TestNodeReplacement(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	for _, dead := range []string{"node2", "node1"} {
		survivor := c.other(dead)
		n := c.layout.Nodes[dead]
		c.write(n.path("broken"), nil, 0o644)
		c.power("off", dead)
		c.waitFenced(survivor, dead, 1)
		c.waitWrites(w, survivor+" alone")
		c.power("off", dead)
		for _, state := range []string{"var-lib/etcd", "var-lib/pacemaker", "var-lib/corosync", "var-lib/tnf", "etc/corosync"} {
			if err := os.RemoveAll(n.path("disk", state)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Remove(n.path("broken")); err != nil {
			t.Fatal(err)
		}
		before := len(readFile(n.path("log", "setup.out")))
		c.power("on", dead)
		c.waitRoles(survivor, bothPromoted)
		c.waitWrites(w, dead+" replaced")
		c.waitFor(dead+"'s setup done", settle, func() (bool, string) {
			_, err := os.Stat(n.path("disk", "var-lib", "tnf", "setup.done"))
			return err == nil, ""
		})
		setup := readFile(n.path("log", "setup.out"))[before:]
		want := "cluster configuration: left to node1"
		if dead == "node1" {
			want = "cluster configuration: unchanged"
		}
		if !strings.Contains(setup, want) {
			t.Fatalf("%s's setup on the new machine, want %q:\n%s", dead, want, setup)
		}
	}
	c.stopAndCheck(w)
}
