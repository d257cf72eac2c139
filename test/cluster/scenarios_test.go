//go:build integration

package cluster_test

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/test/logline"
)

// Scenario 1: a node that boots alone stays inert; when its peer arrives both are promoted.
// Setup run again changes nothing (the fence delay it sized is kept), and no BMC password is in
// the CIB.
func TestColdBoot(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	c.power("on", "node1")
	c.stayInert("node1", 40*time.Second)
	m, _, _ := c.status("node1")
	if !m.WaitingForAll {
		t.Fatal("node1 alone: Corosync is not waiting for all nodes")
	}
	c.power("on", "node2")
	c.waitRoles("node1", bothPromoted)
	t.Logf("the HA stack: %s", c.checkStack("node1"))
	w := c.startWriter()
	c.waitWrites(w, "both promoted")
	c.stopAndCheck(w)
	// A peer that is a member is never confirmed down, and that is said before any question,
	// with the exit code of a refusal (3).
	if out, err := c.tnfctl("node1", "confirm-peer-down"); !exitedWith(err, 3) || !strings.Contains(out, "live Corosync member") {
		t.Errorf("confirm-peer-down with node2 a member: %v\n%s", err, out)
	}
	// Each fence device runs on the node that fences with it, never on its own target.
	_, st, err := c.status("node1")
	if err != nil || st == nil {
		t.Fatalf("status: %v", err)
	}
	for device, runsOn := range map[string]string{"fence-node1": "node2", "fence-node2": "node1",
		"fence-node1-poweroff": "node2", "fence-node2-poweroff": "node1"} {
		if st.Role(device, runsOn) != "Started" {
			t.Errorf("%s does not run on %s: %+v", device, runsOn, st.Resources)
		}
	}
	// The layer's agents are fence agents to Pacemaker's fencer and to pcs, and the levels are
	// registered: the power-off proof first, the power-off through the BMC second.
	for _, agent := range []string{"fence_tnf_poweroff", "fence_tnf_redfish"} {
		for _, argv := range [][]string{{"stonith_admin", "--metadata", "--agent", agent}, {"pcs", "stonith", "describe", agent}} {
			out, err := c.run("node1", argv...)
			if err != nil || !strings.Contains(out, "systems_uri") || !strings.Contains(out, "ssl_fingerprint") {
				t.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
			}
		}
	}
	levels, err := c.run("node1", "stonith_admin", "--list-registered")
	if err != nil || !strings.Contains(levels, "fence-node2-poweroff") {
		t.Errorf("stonith_admin --list-registered on node1: %v\n%s", err, levels)
	}
	// The CIB's fencing topology, not pcs's listing, whose wording each pcs release changes.
	topology, err := c.run("node1", "cibadmin", "--query", "--scope", "fencing-topology")
	var levelsXML struct {
		Levels []struct {
			Target  string `xml:"target,attr"`
			Index   string `xml:"index,attr"`
			Devices string `xml:"devices,attr"`
		} `xml:"fencing-level"`
	}
	if err == nil {
		err = xml.Unmarshal([]byte(topology), &levelsXML)
	}
	var got []string
	for _, l := range levelsXML.Levels {
		got = append(got, l.Target+" "+l.Index+" "+l.Devices)
	}
	slices.Sort(got)
	if want := []string{"node1 1 fence-node1-poweroff", "node1 2 fence-node1", "node2 1 fence-node2-poweroff", "node2 2 fence-node2"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("fencing levels %q, want %q: %v\n%s", got, want, err, topology)
	}

	out, err := c.tnfctl("node1", "setup", "--wait", "1m")
	if err != nil {
		t.Fatalf("setup again: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(line, ": written") || strings.HasSuffix(line, ": applied") {
			t.Errorf("setup again changed something: %s", line)
		}
	}
	if !strings.Contains(out, "cluster configuration: unchanged") || !strings.Contains(out, "fence_tnf_redfish: ok") ||
		!strings.Contains(out, "on the device that fences node1: kept, sized by an earlier setup") {
		t.Errorf("setup again:\n%s", out)
	}
	cib, err := c.run("node1", "cibadmin", "--query")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if pw := c.password(n); strings.Contains(cib, pw) {
			t.Errorf("the CIB holds %s's BMC password", n)
		}
	}
	if !strings.Contains(cib, `name="password" value="lrm://"`) {
		t.Error("the fence devices' passwords are not cibsecret references")
	}
}

// Scenario 2: the cluster link fails. The race winner (node1) fences node2 and serves alone;
// node2 reboots and stays inert while the link is down; after healing it rejoins. The API's
// clients write and read through node1's API server and watch through both.
func TestNetworkSplit(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	w := c.upWithAPIAndWriting()
	api := c.startAPIClients("split", "node1")
	cut := time.Now()
	c.link("down")
	c.waitFenced("node1", "node2", 1)
	c.waitRoles("node1", map[string]string{"node1": "Promoted"})
	c.waitWrites(w, "node1 alone")
	c.waitWrites(api.writer, "node1 alone, through the API")
	c.logWritesBack("the link cut", cut, w, api)
	// The admin's view on the survivor (text): who is gone, who fenced it; exit 4, degraded.
	out, code, err := c.statusRun("node1")
	if code != 4 {
		t.Errorf("tnfctl status on node1 alone: exit %d, want 4 (degraded)", code)
	}
	for _, want := range []string{"DEGRADED: node1 serves alone; node2 is away.", "node2 absent", "quorate yes",
		"Node node1 (this node)", "\n  etcd                     Promoted\n", "reboot of node2 by node1: success"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("tnfctl status on node1 lacks %q (%v):\n%s", want, err, out)
		}
	}
	c.waitBooted("node2")
	c.stayInert("node2", 20*time.Second)
	c.link("up")
	c.waitRoles("node1", bothPromoted)
	c.waitAPIReady("node2")
	c.waitWrites(api.writer, "both back, through the API")
	c.stopAPIClients(api)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 1})
}

// TestNetworkSplitSlowBMC: scenario 2 with BMCs that answer every request in 3 s, as slow real
// ones do, from the first boot on: setup sized the race winner's delay from them (13 or 14 s,
// where the field's is 10 s), node1 fences node2 and serves, and node1 is never fenced, although each
// fencing step takes its 3 s.
func TestNetworkSplitSlowBMC(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	c.faults(`{"latency": "3s"}`)
	w := c.upAndWriting()
	// The first level's 3 s read timeout, two answers of a little over 3 s and 3 s, in whole seconds.
	if out, err := c.run("node1", "crm_resource", "--resource", "fence-node1", "--get-parameter", "pcmk_delay_base"); err != nil ||
		(strings.TrimSpace(out) != "13s" && strings.TrimSpace(out) != "14s") {
		t.Errorf("the race winner's delay after setup with a 3 s BMC: %q (%v), want 13s or 14s", out, err)
	}
	c.link("down")
	c.waitFenced("node1", "node2", 1)
	c.waitWrites(w, "node1 alone")
	c.faults(`{}`)
	c.waitBooted("node2")
	c.link("up")
	c.waitRoles("node1", bothPromoted)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 1})
}

// Scenario 3: either node loses power. The survivor fences it (the first level: its BMC says
// Off) and serves alone; the node, left off, is powered on and rejoins.
func TestNodeFailure(t *testing.T) {
	t.Parallel()
	for _, victim := range []string{"node2", "node1"} {
		t.Run(victim, func(t *testing.T) {
			t.Parallel() // a cluster each
			c := newCluster(t, nil)
			survivor := "node1"
			if victim == "node1" {
				survivor = "node2"
			}
			w := c.upAndWriting()
			c.power("off", victim)
			c.waitFor(survivor+" fenced "+victim, settle, func() (bool, string) { return c.fences(survivor, victim) >= 1, "" })
			// The first level proved it off: the BMC's certificate names no address, and its pin
			// (cluster.yaml) is what lets its "Off" count.
			disk := filepath.Join(c.layout.Nodes[survivor].Dir, "disk", "var-log")
			if log := readFile(filepath.Join(disk, "pacemaker", "pacemaker.log")); !strings.Contains(log, "using fence-"+victim+"-poweroff returned 0") {
				t.Fatalf("%s was not fenced by the first level: %s", victim, lastLineWith(log, "fence-"+victim))
			}
			c.waitWrites(w, survivor+" alone")
			// The survivor's etcd agent heard of the fencing from Pacemaker's alert too: at once,
			// or, when the notification was restarting etcd, from the alert agent's next try.
			c.waitFor(survivor+"'s agent heard the fencing alert", time.Minute, func() (bool, string) {
				if strings.Contains(readFile(filepath.Join(disk, "tnf-etcd.log")), "fencing alert: the peer was fenced") {
					return true, ""
				}
				return false, lastLineWith(readFile(filepath.Join(disk, "pacemaker", "pacemaker.log")), "tnf-fencing-alert:")
			})
			c.powerBackOn(victim)
			c.waitRoles(survivor, bothPromoted)
			c.stopAndCheck(w)
			c.assertFenced(survivor, map[string]int{victim: 1, survivor: 0})
		})
	}
}

// Scenario 4: node2's hardware dies (it powers on but never boots); node1 fences it and serves
// alone, then loses power too and boots alone: it stays inert until the admin confirms node2
// down. The same through auto-unblock: refused while the BMC says On or does not answer,
// done once it says Off.
func TestTwoFailures(t *testing.T) {
	t.Parallel()
	c := newCluster(t, func(cfg *clusterconfig.Config) {
		cfg.AutoUnblock = clusterconfig.AutoUnblock{Enabled: true, After: duration.Duration{Duration: 10 * time.Second}}
	})
	w := c.upAndWriting()
	c.write(filepath.Join(c.layout.Nodes["node2"].Dir, "broken"), nil, 0o644)
	c.power("off", "node2")
	c.waitFenced("node1", "node2", 1)
	c.waitWrites(w, "node1 alone")
	w.Stop()
	c.power("on", "node2") // it powers on, and never boots

	bootAlone := func() {
		c.power("off", "node1")
		c.power("on", "node1")
		c.stayInert("node1", 15*time.Second)
	}
	bootAlone()
	// Asked without --yes, it shows what node2's BMC says before its question (node2 is powered).
	if out, err := c.tnfctl("node1", "confirm-peer-down"); err == nil || !strings.Contains(out, "pass --yes") ||
		!strings.Contains(out, "node2: BMC ") || !strings.Contains(out, " says PowerState On") {
		t.Fatalf("confirm-peer-down without a terminal or --yes: %v\n%s", err, out)
	}
	out, err := c.tnfctl("node1", "confirm-peer-down", "--yes")
	if err != nil {
		t.Fatalf("confirm-peer-down --yes: %v\n%s", err, out)
	}
	t.Logf("confirm-peer-down --yes:\n%s", out)
	c.waitRoles("node1", map[string]string{"node1": "Promoted"})
	c.checkAcked(w.Acked(), "node1")

	// Auto-unblock: the BMC says On (powered, not booted), then does not answer, then Off.
	bootAlone()
	autoUnblock := func() (string, error) { return c.tnfctl("node1", "auto-unblock", "--gap", "2s") }
	if out, err := autoUnblock(); err != nil || !strings.Contains(out, "waited alone") {
		t.Fatalf("auto-unblock, first pass: %v\n%s", err, out)
	}
	time.Sleep(11 * time.Second)
	// Exit 2, as operate.md says: the BMC did not prove the peer off.
	if out, err := autoUnblock(); !exitedWith(err, 2) || !strings.Contains(out, `PowerState \"On\"`) {
		t.Fatalf("auto-unblock with the peer On: %v\n%s", err, out)
	}
	c.faults(`{"failNext": 1000}`)
	if out, err := autoUnblock(); !exitedWith(err, 2) || !strings.Contains(out, "BMC read 1 failed") {
		t.Fatalf("auto-unblock with the BMC not answering: %v\n%s", err, out)
	}
	c.faults(`{}`)
	c.assertInert("node1")
	c.power("off", "node2")
	out, err = autoUnblock()
	if err != nil {
		t.Fatalf("auto-unblock with the peer Off: %v\n%s", err, out)
	}
	t.Logf("auto-unblock:\n%s", out)
	c.waitRoles("node1", map[string]string{"node1": "Promoted"})
	c.checkAcked(w.Acked(), "node1")
}

// Scenario 5: kubelet fails on node2. Pacemaker restarts it there, and neither etcd (started
// after kubelet at boot, but not bound to its restarts) nor anything else moves; nobody is
// fenced. When its stop fails as well, node1 fences node2, which reboots and rejoins. The API's
// clients write and read through node1's API server and watch through both.
func TestKubeletFailure(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	w := c.upWithAPIAndWriting()
	api := c.startAPIClients("kubelet", "node1")
	for _, n := range c.nodes {
		c.assertStartedAfter(n, c.standInPID(n, "kubelet"), "kubelet", c.etcdPIDs(n), "etcd")
	}
	etcdBefore := c.etcdPIDs("node2")
	began := time.Now()
	failed := c.standInPID("node2", "kubelet")
	c.signal("node2", failed, unix.SIGKILL)
	c.waitKubeletReplaced("node2", failed)
	c.waitWrites(w, "kubelet restarted")
	if now := c.etcdPIDs("node2"); !slices.Equal(now, etcdBefore) {
		t.Fatalf("kubelet's restart restarted etcd on node2: pids %v, then %v", etcdBefore, now)
	}
	t.Logf("longest write gap through kubelet's restart: %v (etcd), %v (API)", w.LongestGap(began, time.Now()).Round(time.Millisecond),
		api.LongestGap(began, time.Now()).Round(time.Millisecond))
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})

	if out, err := c.run("node2", "touch", "/run/tnf-standin/kubelet.stop-fails"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	stuck := time.Now()
	c.signal("node2", c.standInPID("node2", "kubelet"), unix.SIGKILL)
	c.waitFenced("node1", "node2", 1)
	c.waitWrites(w, "node2 fenced")
	c.waitWrites(api.writer, "node2 fenced, through the API")
	t.Logf("longest write gap through kubelet's failed stop and node2's fencing: %v (etcd), %v (API)",
		w.LongestGap(stuck, time.Now()).Round(time.Millisecond), api.LongestGap(stuck, time.Now()).Round(time.Millisecond))
	c.waitRoles("node1", bothPromoted)
	c.waitAPIReady("node2")
	c.waitWrites(api.writer, "both back, through the API")
	c.stopAPIClients(api)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 1})
}

// waitKubeletReplaced waits until node runs a kubelet other than pid and both are Promoted.
func (c *cluster) waitKubeletReplaced(node string, pid int) {
	c.t.Helper()
	c.waitFor("kubelet restarted on "+node, settle, func() (bool, string) {
		now := c.standInPID(node, "kubelet")
		return now != 0 && now != pid, fmt.Sprintf("pid %d", now)
	})
	c.waitBothServing("node1")
}

// Scenario 6: etcd fails under Pacemaker: killed (SIGKILL) on either node, then frozen (SIGSTOP) on
// either node, with the writer running. Each time the instance is recovered (a crash is reported
// by the agent's watcher at once, a frozen member found by the monitor's liveness timeout), the
// peer goes on alone, the member rejoins; nobody is fenced, no acknowledged write is lost.
func TestEtcdFailure(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	w := c.upWithAPIAndWriting()
	// The API as its clients see each fault: a writer through node1's API server, informers
	// through both.
	api := c.startAPIClients("etcd-faults", "node1")
	for _, fault := range []etcdFault{{"node2", unix.SIGKILL}, {"node1", unix.SIGKILL}, {"node1", unix.SIGSTOP}, {"node2", unix.SIGSTOP}} {
		began := time.Now()
		c.waitEtcdReplaced(fault, c.signalEtcd(fault))
		c.waitWrites(w, fault.String()+" recovered")
		c.waitWrites(api.writer, fault.String()+" recovered, through the API")
		etcdAt, _ := w.BackAfter(began)
		apiAt, _ := api.BackAfter(began)
		t.Logf("%s: writes back %v after the fault (etcd), %v (API); longest API write gap %v", fault,
			etcdAt.Sub(began).Round(10*time.Millisecond), apiAt.Sub(began).Round(10*time.Millisecond), api.LongestGap(began, time.Now()).Round(10*time.Millisecond))
	}
	c.stopAPIClients(api)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}

// etcdFault is a signal sent to one node's etcd.
type etcdFault struct {
	node string
	sig  unix.Signal
}

func (f etcdFault) String() string { return f.node + "'s etcd " + unix.SignalName(f.sig) }

// signalEtcd sends the fault's signal to the node's etcd and returns its PID.
func (c *cluster) signalEtcd(f etcdFault) int {
	c.t.Helper()
	pids := c.etcdPIDs(f.node)
	if len(pids) != 1 {
		c.t.Fatalf("%s runs etcd %d times", f.node, len(pids))
	}
	c.signal(f.node, pids[0], f.sig)
	return pids[0]
}

// waitEtcdReplaced waits until the node runs an etcd other than pid and both are Promoted.
func (c *cluster) waitEtcdReplaced(f etcdFault, pid int) {
	c.t.Helper()
	c.waitFor(f.String()+" replaced", settle, func() (bool, string) {
		now := c.etcdPIDs(f.node)
		return len(now) == 1 && now[0] != pid, fmt.Sprint(now)
	})
	c.waitBothServing("node1")
}

// Scenario 7: both nodes crash at once and come back. First from step: both start their members
// again (voters of the two of them), nothing is forced, with every write. Then with node1 ahead: node2 was fenced in a split and booted inert while node1
// served alone; both crash; node2, with the older data, boots first and node1 later: node1's
// data leads (every write it acknowledged alone is on both), nobody is fenced.
func TestBothCrash(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	c.crashBoth()
	c.up()
	c.waitWrites(w, "both back")
	// Each start decided on the other's fresh record: no lead was claimed and then refused.
	for _, line := range strings.Split(c.agentLogs(), "\n") {
		if strings.Contains(line, "action=promote") && strings.Contains(line, "level=ERROR") {
			t.Fatalf("a promote failed after both crashed:\n%s", line)
		}
	}
	c.bothStarted(c.agentLogs())

	c.link("down")
	c.waitFenced("node1", "node2", 1)
	c.waitRoles("node1", map[string]string{"node1": "Promoted"})
	c.waitWrites(w, "node1 alone")
	c.waitBooted("node2")
	c.waitWrites(w, "node1 ahead")
	c.crashBoth()
	c.link("up")
	c.power("on", "node2")
	c.stayInert("node2", 10*time.Second)
	c.power("on", "node1")
	c.waitRoles("node1", bothPromoted)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}

// TestStaleClaim: node2, fencing node1 as the survivor, took the force-new-cluster claim and lost
// its power before it forced or released it (found by the fault campaign, seed
// 705693546804432031, cycle 75: a node that stays away). The claim outlives them in the CIB; both
// nodes come back with the same data. The name tie-break made node2 wait for node1 and the
// claim made node1 wait for node2, for ever. Now node2 releases the claim it holds but does not
// use, and both start their members (a claim does not hold that back).
func TestStaleClaim(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	w.Stop()
	c.waitSameData()
	claim := `<cluster_property_set id="tnf-etcd-claim"><nvpair id="tnf-etcd-claim-owner" name="tnf-etcd-claim-owner" value="node2"/></cluster_property_set>`
	if out, err := c.run("node1", "cibadmin", "--create", "--scope", "crm_config", "--xml-text", claim); err != nil {
		t.Fatalf("planting node2's claim: %v\n%s", err, out)
	}
	c.crashBoth()
	c.up()
	c.checkAcked(w.Acked(), "node1")
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
	c.bothStarted(c.agentLogs())
}

// bothStarted checks in the agents' logs that both nodes' promotes started both members and
// nothing was forced.
func (c *cluster) bothStarted(logs string) {
	c.t.Helper()
	for _, n := range []string{"node1", "node2"} {
		if !strings.Contains(logs, "action=promote node="+n+" decision=start-both") || strings.Contains(logs, "forcing a new cluster") ||
			strings.Contains(logs, "decided without the pairs") {
			c.t.Fatalf("want both promotes to start both members and nothing forced:\n%s", logline.Grep(logs, "decision="))
		}
	}
}
