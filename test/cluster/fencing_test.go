//go:build integration

package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// fencingFails is the part of tnfctl status -o json that reports a failing fencing.
type fencingFails struct {
	Target   string `json:"target"`
	Attempts int    `json:"attempts"`
	BMC      string `json:"bmc"`
	Advice   string `json:"advice"`
}

// waitFencingFails waits until from's tnfctl status reports target's fencing failing with a BMC
// description holding bmc, and the text view gives the way out.
func (c *cluster) waitFencingFails(from, target, bmc string) fencingFails {
	c.t.Helper()
	var ff fencingFails
	c.waitFor(fmt.Sprintf("%s's status: fencing of %s failing (%s)", from, target, bmc), settle, func() (bool, string) {
		out, _, err := c.statusRun(from, "-o", "json")
		var st struct {
			FencingFails *fencingFails `json:"fencingFails"`
		}
		if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.FencingFails == nil {
			return false, out
		}
		ff = *st.FencingFails
		return ff.Target == target && strings.Contains(ff.BMC, bmc), ff.BMC
	})
	text, _, err := c.statusRun(from)
	want := fmt.Sprintf("FAILING: fencing of %s failed since ", target)
	if err != nil || !strings.Contains(text, want) || !strings.Contains(text, "run `tnfctl confirm-peer-down`") ||
		!strings.HasPrefix(text, "BLOCKED: the fencing of "+target+" fails") {
		c.t.Fatalf("tnfctl status on %s, want %q and the way out: %v\n%s", from, want, err, text)
	}
	c.t.Logf("tnfctl status on %s: %s", from, ff.Advice)
	return ff
}

// assertNoWrite checks that node's etcd takes no write: it waits for a fencing.
func (c *cluster) assertNoWrite(node string) {
	c.t.Helper()
	cli, err := c.newEtcdClient(node)
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "must-not-be-written", "x"); err == nil {
		c.t.Fatalf("%s's etcd took a write while its peer's fencing had not completed", node)
	}
}

// writeAfter waits for the first write node's etcd acknowledges from now, and returns how long
// it took.
func (c *cluster) writeAfter(node, key string) time.Duration {
	c.t.Helper()
	return c.writeWithin(node, key, settle)
}

// writeWithin is writeAfter with its own bound.
func (c *cluster) writeWithin(node, key string, limit time.Duration) time.Duration {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	began := time.Now()
	select {
	case at := <-c.firstWrite(ctx, key, node):
		return at.Sub(began)
	case <-ctx.Done():
		c.t.Fatalf("%s's etcd took no write within %v", node, limit)
	}
	return 0
}

// TestFencingCannotComplete: node2 loses its power together with its BMC (every BMC
// unreachable). node1 never runs etcd alone without proof: its fencing of node2 fails, Pacemaker
// keeps retrying, tnfctl status says why and what to do, and tnfctl fence-check shows the same.
// The administrator's confirm-peer-down, typed at a terminal as the runbook writes it, shows
// node2's power and asks: "no" leaves node1 without writes, "yes" unblocks it. Then the same
// loss once more, and this time the BMC comes back: Pacemaker's own retry (within its one-minute
// recheck) proves node2 off through the first fencing level and node1 serves, without anyone.
func TestFencingCannotComplete(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	w.Stop()

	c.stopEmulator()
	c.power("off", "node2")
	c.waitFencingFails("node1", "node2", "BMC "+bmcIP+" unreachable")
	c.assertNoWrite("node1")
	if out, err := c.tnfctl("node1", "fence-check", "--target", "node2", "--timeout", "5s"); err == nil ||
		!strings.Contains(out, "redfish: FAILED") || !strings.Contains(out, "fence_tnf_redfish: FAILED") {
		t.Fatalf("fence-check --target node2 with the BMC unreachable: %v\n%s", err, out)
	}
	const question = "Is node2 powered off and will it stay off? Type yes to confirm:"
	out, err := c.atTerminal("node1", "no", c.tnfctlPath("node1"), "confirm-peer-down")
	if err == nil || !strings.Contains(out, "node2: ") || !strings.Contains(out, question) || !strings.Contains(out, "not confirmed") {
		t.Fatalf("confirm-peer-down at a terminal, answered no: %v, want a refusal after node2's power and the question\n%s", err, out)
	}
	c.assertNoWrite("node1")
	out, err = c.atTerminal("node1", "yes", c.tnfctlPath("node1"), "confirm-peer-down")
	if err != nil || !strings.Contains(out, question) {
		t.Fatalf("confirm-peer-down at a terminal, answered yes, while the fencing fails: %v\n%s", err, out)
	}
	t.Logf("confirm-peer-down, answered yes: first write after %v\n%s", c.writeAfter("node1", "after-confirm").Round(10*time.Millisecond), out)

	c.startEmulator()
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)

	// The BMC is back while node2 is still off: the retry proves it, through devices Pacemaker
	// stopped after their failed checks (a stopped device still fences).
	c.stopEmulator()
	c.power("off", "node2")
	c.waitFencingFails("node1", "node2", "unreachable")
	c.assertNoWrite("node1")
	c.waitDevicesStopped("node1", "fence-node2", "fence-node2-poweroff")
	fencedBefore := c.fences("node1", "node2")
	c.startEmulator()
	t.Logf("BMC back: first write after %v", c.writeAfter("node1", "after-bmc-back").Round(10*time.Millisecond))
	if got := c.fences("node1", "node2"); got != fencedBefore+1 {
		t.Fatalf("node2 fenced %d times after the BMC came back, want 1", got-fencedBefore)
	}
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)
}

// TestFencingWrongPassword: node2's BMC password changes at the BMC only. Its fencing fails;
// tnfctl status names the refused credentials and fence-check --target shows them refused. The
// administrator then writes the new password in the node configuration on node1 (without
// running setup, so the registered fence devices keep the old one and keep failing), and
// auto-unblock, enabled, reads node2's BMC with it: Off twice, so it confirms node2 down and
// node1 serves.
func TestFencingWrongPassword(t *testing.T) {
	t.Parallel()
	c := newCluster(t, func(cfg *clusterconfig.Config) {
		cfg.AutoUnblock = clusterconfig.AutoUnblock{Enabled: true, After: duration.Duration{Duration: 10 * time.Second}}
	})
	w := c.upAndWriting()
	w.Stop()
	pw := []byte(randomText(16) + "\n")
	c.write(filepath.Join(c.dir, "bmc", "node2.password"), pw, 0o600)
	c.restartEmulator()
	c.power("off", "node2")
	c.waitFencingFails("node1", "node2", "rejects the credentials (HTTP 401)")
	c.assertNoWrite("node1")
	if out, err := c.tnfctl("node1", "fence-check", "--target", "node2"); err == nil || !strings.Contains(out, "401") {
		t.Fatalf("fence-check --target node2 with a password the BMC refuses: %v\n%s", err, out)
	}
	autoUnblock := func() (string, error) { return c.tnfctl("node1", "auto-unblock", "--gap", "2s") }
	if out, err := autoUnblock(); err != nil || !strings.Contains(out, "waited alone 0s") {
		t.Fatalf("auto-unblock, first pass: %v\n%s", err, out)
	}
	time.Sleep(11 * time.Second)
	if out, err := autoUnblock(); !exitedWith(err, 2) || !strings.Contains(out, "BMC read 1 failed") {
		t.Fatalf("auto-unblock with the refused password: %v\n%s", err, out)
	}
	// What a site's monitoring sees meanwhile.
	c.assertMetric("node1", `tnf_fencing_failing{target="node2"} 1`)
	c.assertMetric("node1", `tnf_auto_unblock_decisions_total{node="node1",outcome="refused"} 1`)
	c.assertMetric("node1", `ha_cluster_pacemaker_nodes{node="node2",status="unclean",type="member"} 1`)
	c.write(filepath.Join(c.layout.Nodes["node1"].Dir, "disk", "etc", "tnf", "secrets", "node2.password"), pw, 0o600)
	out, err := autoUnblock()
	if err != nil || !strings.Contains(out, "confirmed fenced") {
		t.Fatalf("auto-unblock with the right password, node2 off: %v\n%s", err, out)
	}
	t.Logf("auto-unblock: first write after %v\n%s", c.writeAfter("node1", "after-auto-unblock").Round(10*time.Millisecond), out)
	c.assertMetric("node1", `tnf_auto_unblock_decisions_total{node="node1",outcome="confirmed"} 1`)
}

// TestReturnBeforeFencing: a node loses its power with every BMC unreachable, so its peer's
// fencing cannot complete and the peer's etcd runs on without a leader; before anyone confirms
// it down, its power comes back (a site's power restored, a BMC that hung until then). It
// rejoins, finds its peer's member waiting for it, starts its own member, and the two have
// their quorum back: nobody fenced, nothing forced, nothing moved aside, the peer writes again.
// Once for each node, since the tie of equal data goes to the first by name.
func TestReturnBeforeFencing(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	w.Stop()
	for _, lost := range c.nodes {
		survivor := c.other(lost)
		logs, began := c.agentLogSizes(), time.Now()
		c.stopEmulator()
		c.power("off", lost)
		c.waitFencingFails(survivor, lost, "unreachable")
		c.assertNoWrite(survivor)
		c.powerBackOn(lost)
		t.Logf("%s powered on before its fencing completed: %s's first write after %v", lost, survivor, c.writeAfter(survivor, "after-"+lost+"-back").Round(10*time.Millisecond))
		c.waitRoles(survivor, bothPromoted)
		c.startEmulator()
		since, elapsed := c.agentLogsSince(logs), time.Since(began)
		for _, line := range strings.Split(since, "\n") {
			for _, unwanted := range []string{"forcing a new cluster of one", "decision=join-as-learner", "moved local data aside"} {
				if strings.Contains(line, unwanted) {
					c.t.Fatalf("%s came back to its peer's leaderless member, and an agent logged %q:\n%s", lost, unwanted, line)
				}
			}
		}
		if n := c.fences(survivor, lost); n != 0 {
			c.t.Fatalf("%s fenced %d times although it came back before any fencing completed", lost, n)
		}
		// A device that failed waits out its failure-timeout (2 minutes) before its next start;
		// without it, Pacemaker restarted each one every few seconds, and each failed start
		// aborted the transition holding the returning node's etcd start.
		n, limit := strings.Count(since, "Requesting local execution of start operation for fence-"), 4*(1+int(elapsed/(2*time.Minute)))
		c.t.Logf("fence device starts with the BMCs unreachable: %d in %v", n, elapsed.Round(time.Second))
		if n > limit {
			c.t.Fatalf("the fence devices were started %d times in %v with their BMCs unreachable, want at most %d", n, elapsed.Round(time.Second), limit)
		}
	}
}

// waitDevicesStopped waits until Pacemaker, seen from node, holds the fence devices stopped.
func (c *cluster) waitDevicesStopped(node string, devices ...string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%v stopped after their failed checks", devices), settle, func() (bool, string) {
		_, st, err := c.status(node)
		if err != nil {
			return false, err.Error()
		}
		var roles []string
		stopped := 0
		for _, r := range st.Resources {
			if slices.Contains(devices, r.ID) {
				roles = append(roles, r.ID+" "+r.Role)
				if r.Role == "Stopped" {
					stopped++
				}
			}
		}
		return stopped == len(devices), strings.Join(roles, ", ")
	})
}

// TestSwappedBMCEntries: node1's BMC entry names node2's BMC and the other way round (address,
// user and password: each works, on the wrong machine). The race winner's setup reads each
// system's NICs, finds the entries swapped before anything is configured, and fails saying so:
// no fence device exists that would power off the survivor.
func TestSwappedBMCEntries(t *testing.T) {
	t.Parallel()
	c := newCluster(t, func(cfg *clusterconfig.Config) {
		cfg.Nodes[0].BMC, cfg.Nodes[1].BMC = cfg.Nodes[1].BMC, cfg.Nodes[0].BMC
	})
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitState("node1", "setup-failed")
	failed := readFile(c.layout.Nodes["node1"].path("disk", "var-lib", "tnf", "setup.failed"))
	for _, n := range c.nodes {
		if want := n + "'s identity: FAILED: " + n + "'s BMC entry reaches "; !strings.Contains(failed, want) || !strings.Contains(failed, "swapped") {
			t.Errorf("setup.failed lacks %q and swapped:\n%s", want, failed)
		}
	}
	if out, _ := c.run("node1", "cibadmin", "--query", "--scope", "resources"); strings.Contains(out, "fence_") {
		t.Fatalf("fence devices configured despite swapped BMC entries:\n%s", out)
	}
	// What an administrator's check says, on either node.
	if out, err := c.tnfctl("node2", "fence-check", "--target", "node2"); err == nil || !strings.Contains(out, "identity: FAILED: node2's BMC entry reaches node1's machine") {
		t.Fatalf("fence-check --target node2 with swapped entries: %v\n%s", err, out)
	}
}
