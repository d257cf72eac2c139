//go:build integration

package cluster_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

// writeClusterYAML gives node the node configuration cfg, as the node configuration
// MachineConfig's rollout does.
func (c *cluster) writeClusterYAML(node string, cfg clusterconfig.Config) {
	c.t.Helper()
	yml, err := cfg.Marshal()
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(filepath.Join(c.layout.Nodes[node].Dir, "disk", "etc", "tnf", "cluster.yaml"), yml, 0o644)
}

// runningToken is the token timeout node's Corosync runs with.
func (c *cluster) runningToken(node string) string {
	c.t.Helper()
	out, err := c.run(node, "corosync-cmapctl", "-g", "runtime.config.totem.token")
	if err != nil {
		c.t.Fatalf("%s: corosync-cmapctl: %v\n%s", node, err, out)
	}
	_, v, _ := strings.Cut(strings.TrimSpace(out), " = ")
	return v
}

// parameter is a resource's parameter as the CIB holds it.
func (c *cluster) parameter(resource, name string) string {
	c.t.Helper()
	out, err := c.run("node1", "crm_resource", "--resource", resource, "--get-parameter", name)
	if err != nil {
		c.t.Fatalf("%s's %s: %v\n%s", resource, name, err, out)
	}
	return strings.TrimSpace(out)
}

// settingsVersions are the settings versions both nodes published (nodesetup.AttrSettings), as
// node1's Pacemaker shows them.
func (c *cluster) settingsVersions() map[string]string {
	c.t.Helper()
	_, st, err := c.status("node1")
	if err != nil {
		c.t.Fatal(err)
	}
	v := map[string]string{}
	for _, n := range st.Nodes {
		v[n.Name] = n.Attributes[nodesetup.AttrSettings]
	}
	return v
}

// TestSettingsChangedInPlace: cluster.yaml changes on a running pair as the node configuration
// MachineConfig's rollout delivers it with the layer's node disruption policy: node2's file,
// then tnf-reconfigure.service's run of tnfctl setup there, then node1's. The etcd agent's
// parameters (backup_count, liveness_timeout), a fence delay and Corosync's token change with
// a writer running. The token waits for the second node's file, then one reload applies it to
// both Corosyncs; etcd's watchers run with the new parameters (the agent's reload-agent, or a
// monitor's restart of the watcher, where Pacemaker reloaded; a restart, where it chose one);
// nobody is fenced and no write is lost. A run at boot (--if-changed) then finds nothing to
// apply on either node, once node2's, which had waited, ran once more. A BMC address that
// answers nothing is refused on the race winner before anything of the change is applied, with
// the reason in status and the metrics; repaired, it applies. A node's new address is written
// to corosync.conf and said to wait for Corosync's restart, which the running Corosync does not
// get. Each node's settings version says which configuration it runs: the same before and
// after, two while they differ. Last, a change node1 finds in its files as it boots is applied
// by its boot's setup.
func TestSettingsChangedInPlace(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	etcdBefore := map[string][]int{}
	for _, n := range c.nodes {
		etcdBefore[n] = c.etcdPIDs(n)
		if got := c.runningToken(n); got != "3000" {
			t.Fatalf("%s's Corosync runs with a token of %s ms, want 3000", n, got)
		}
	}
	logFrom := map[string]int{}
	for _, n := range c.nodes {
		logFrom[n] = len(readFile(c.pacemakerLog(n)))
	}

	before := c.settingsVersions()
	if before["node1"] == "" || before["node1"] != before["node2"] {
		t.Fatalf("settings versions of the pair set up alike: %v", before)
	}
	cfg := c.input.Config
	cfg.Token = duration.Duration{Duration: 2 * time.Second}
	cfg.FenceDelay.Other = duration.Duration{Duration: 2 * time.Second}
	cfg.Resources.Etcd = maps.Clone(cfg.Resources.Etcd)
	cfg.Resources.Etcd["backup_count"], cfg.Resources.Etcd["liveness_timeout"] = "5", "3"

	c.writeClusterYAML("node2", cfg)
	out, err := c.tnfctl("node2", "setup", "--wait", "1m")
	if err != nil || !strings.Contains(out, "corosync: totem.token 3000 → 2000: waits for node1's setup") {
		t.Fatalf("setup on node2, first with the new configuration: %v\n%s", err, out)
	}
	for _, n := range c.nodes {
		if got := c.runningToken(n); got != "3000" {
			t.Errorf("%s's Corosync took the new token (%s ms) before node1 had it", n, got)
		}
	}
	if v := c.settingsVersions(); v["node1"] != before["node1"] || v["node2"] == before["node2"] {
		t.Errorf("settings versions with node2 changed alone: %v, before %v", v, before)
	}
	if out, _ := c.tnfctl("node1", "status"); !strings.Contains(out, "corosync on node2: totem.token 3000 -> 2000: not running yet, waits for a reload") {
		t.Errorf("tnfctl status on node1 with node2's token waiting:\n%s", out)
	}
	c.writeClusterYAML("node1", cfg)
	out, err = c.tnfctl("node1", "setup", "--wait", "1m")
	if err != nil || !strings.Contains(out, "corosync: totem.token 3000 → 2000: reloaded on both nodes") || !strings.Contains(out, "cluster configuration: applied") {
		t.Fatalf("setup on node1, the second with the new configuration: %v\n%s", err, out)
	}
	for _, n := range c.nodes {
		if got := c.runningToken(n); got != "2000" {
			t.Errorf("%s's Corosync runs with a token of %s ms after the reload, want 2000", n, got)
		}
	}
	if v := c.settingsVersions(); v["node1"] == before["node1"] || v["node1"] != v["node2"] {
		t.Errorf("settings versions once both changed: %v, before %v", v, before)
	}
	if out, _ := c.tnfctl("node2", "status"); strings.Contains(out, "corosync on") {
		t.Errorf("tnfctl status on node2 once both Corosyncs run the token:\n%s", out)
	}
	if got := c.parameter("etcd", "backup_count"); got != "5" {
		t.Errorf("etcd's backup_count in the CIB: %q", got)
	}
	if got := c.parameter("fence-node2", "pcmk_delay_base"); got != "2s" {
		t.Errorf("fence-node2's delay in the CIB: %q", got)
	}
	// The watcher runs with the new values: started again by reload-agent, or by the next
	// monitor where Pacemaker ran none.
	c.waitFor("etcd's watchers running with the new parameters on both nodes", settle, func() (bool, string) {
		var running []string
		for _, n := range c.nodes {
			out, _ := c.run(n, "cat", "/run/tnf-etcd/watcher.params")
			running = append(running, n+": "+out)
		}
		all := strings.Join(running, "; ")
		return strings.Count(all, "backup_count=5 request_timeout=5 liveness_timeout=3 ") == 2, all
	})
	// Whether Pacemaker reloads or restarts etcd for a reloadable parameter is its own choice:
	// alone here it always ran reload-agent, beside other scenarios in CI it once restarted etcd
	// on both nodes (docs/operate.md says so). The test says which it saw; the writer checks
	// that nothing acknowledged was lost either way.
	reloads := strings.Count(c.agentLogsSince(logFrom), "parameters reloaded")
	c.waitRoles("node1", bothPromoted)
	var restarted []string
	for _, n := range c.nodes {
		if now := c.etcdPIDs(n); !slices.Equal(now, etcdBefore[n]) {
			restarted = append(restarted, n)
		}
	}
	t.Logf("etcd's new parameters: %d reloads logged (reload-agent or a monitor), etcd restarted on %v", reloads, restarted)
	// node2 waited for the reload: its next run at boot runs setup once more (its mark that a
	// Corosync setting was pending), then none has anything to apply.
	if out, err := c.tnfctl("node2", "setup", "--if-changed", "--wait", "1m"); err != nil || strings.Contains(out, "nothing to apply") || strings.Contains(out, "→") {
		t.Errorf("setup --if-changed on node2, which had waited for the reload: %v\n%s", err, out)
	}
	for _, n := range c.nodes {
		out, err := c.tnfctl(n, "setup", "--if-changed", "--wait", "1m")
		if err != nil || !strings.Contains(out, "nothing to apply") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("setup --if-changed on %s after the change: %v\n%s", n, err, out)
		}
	}

	// A BMC address that answers nothing, beside a new delay, on the race winner: refused, the
	// reason in status, nothing of it applied, the settings kept; the file repaired, it passes.
	bad := cfg
	bad.FenceDelay.Other = duration.Duration{Duration: 3 * time.Second}
	bad.Nodes = slices.Clone(cfg.Nodes)
	i := slices.IndexFunc(bad.Nodes, func(n clusterconfig.Node) bool { return n.Name == "node2" })
	bad.Nodes[i].BMC.Address = strings.Replace(bad.Nodes[i].BMC.Address, ":"+bmcPort+"/", ":1/", 1)
	applied := c.settingsVersions()
	c.writeClusterYAML("node1", bad)
	if out, err := c.tnfctl("node1", "setup", "--wait", "1m"); err == nil || !strings.Contains(out, "fence check node2") {
		t.Errorf("setup on node1 with node2's BMC unreachable: %v\n%s", err, out)
	}
	if got := c.parameter("fence-node2", "pcmk_delay_base"); got != "2s" {
		t.Errorf("fence-node2's delay after a refused change: %q", got)
	}
	if v := c.settingsVersions(); v["node1"] != applied["node1"] {
		t.Errorf("settings version after a refused change: %v, before %v", v, applied)
	}
	if out, _ := c.tnfctl("node1", "status"); !strings.Contains(out, "Setup:     FAILED: a BMC check failed") || !strings.Contains(out, "keeps the settings of its last completed run") {
		t.Errorf("tnfctl status on node1 after a refused change:\n%s", out)
	}
	c.assertMetric("node1", `tnf_setup_state{node="node1",state="failed"} 1`)
	c.writeClusterYAML("node1", cfg)
	if out, err := c.tnfctl("node1", "setup", "--if-changed", "--wait", "1m"); err != nil || strings.Contains(out, "nothing to apply") {
		t.Errorf("setup --if-changed on node1 after a failed run, the file repaired: %v\n%s", err, out)
	}
	if out, _ := c.tnfctl("node1", "status"); strings.Contains(out, "Setup:") {
		t.Errorf("tnfctl status on node1 once repaired:\n%s", out)
	}

	// node2's new address: written, not taken by the running Corosync.
	moved := cfg
	moved.Nodes = slices.Clone(cfg.Nodes)
	i = slices.IndexFunc(moved.Nodes, func(n clusterconfig.Node) bool { return n.Name == "node2" })
	moved.Nodes[i].IP = "192.0.2.99"
	c.writeClusterYAML("node2", moved)
	out, err = c.tnfctl("node2", "setup", "--if-changed", "--wait", "1m")
	if err != nil || !strings.Contains(out, "nodelist.node.1.ring0_addr "+c.ip["node2"]+" → 192.0.2.99 changed in /etc/corosync/corosync.conf: Corosync reads it only when it starts") {
		t.Errorf("setup on node2 with a new address: %v\n%s", err, out)
	}
	if out, _ := c.tnfctl("node1", "status"); !strings.Contains(out, "corosync on node2: nodelist.node.1.ring0_addr "+c.ip["node2"]+" -> 192.0.2.99: not running yet, read at Corosync's next start") {
		t.Errorf("tnfctl status on node1 with node2's new address waiting:\n%s", out)
	}
	c.writeClusterYAML("node2", cfg)
	if out, err := c.tnfctl("node2", "setup", "--if-changed", "--wait", "1m"); err != nil || strings.Contains(out, "→") {
		t.Errorf("setup on node2 with its address back: %v\n%s", err, out)
	}

	// A change node1 finds as it boots (its file changed while it was off) reaches Pacemaker
	// through its boot's setup.
	cfg.Resources.Etcd = maps.Clone(cfg.Resources.Etcd)
	cfg.Resources.Etcd["backup_count"] = "7"
	c.rebootChanging(w, "node1", func() {
		for _, n := range c.nodes {
			c.writeClusterYAML(n, cfg)
		}
	})
	c.waitFor("node1's boot to apply backup_count 7", settle, func() (bool, string) {
		got := c.parameter("etcd", "backup_count")
		return got == "7", got
	})
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}
