//go:build integration

package cluster_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/gather"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
)

// TestGather: tnfctl gather on a serving node and on a node whose Corosync and Pacemaker are
// stopped: both write a bundle, the second lists what it could not collect and why. Then a setup
// run on node1 waits for node2 (the metrics say so) and fails, and its reason is in tnfctl
// status, the metrics and the next bundle. No
// member of any bundle holds a BMC password or the Corosync key, not even the Pacemaker log into
// which the test wrote a password.
func TestGather(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	c.up()
	log := c.pacemakerLog("node1")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("Nov 24 19:00:00 node1 fence_redfish: debug: password=" + c.password("node2") + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	serving := c.gather("node1")
	for name, part := range map[string]string{
		"status.json": `"withQuorum": true`, "pacemaker/crm_mon.xml": "<node_history", "pacemaker/cib.xml": "lrm://",
		"corosync/corosync.conf": "two_node: 1", "corosync/quorumtool.txt": "Quorate:", "etcd/members.json": `"name": "node2"`,
		"metrics.txt": `tnf_etcd_role{node="node1",role="voter"} 1`, "versions.txt": "pacemaker", "tnf/cluster.yaml": "fenceRaceWinner",
		"pacemaker/pacemaker.log": "password=" + gather.Redacted,
	} {
		if !strings.Contains(string(serving.members[name]), part) {
			t.Errorf("node1's bundle: %s has no %q:\n%.2000s", name, part, serving.members[name])
		}
	}

	c.power("cluster-stop", "node2")
	stopped := c.gather("node2")
	for _, name := range []string{"pacemaker/crm_mon.xml", "pacemaker/cib.xml"} {
		if stopped.missing[name] == "" {
			t.Errorf("node2's bundle, Pacemaker and Corosync stopped: %s not listed as missing (collected: %.500s)", name, stopped.members[name])
		}
	}
	// The status says so itself.
	if !strings.Contains(string(stopped.members["status.json"]), `"state": "corosync-down"`) {
		t.Errorf("node2's bundle, Corosync stopped: status.json %.500s (missing: %s)", stopped.members["status.json"], stopped.missing["status.json"])
	}
	if !strings.Contains(string(stopped.members["metrics.txt"]), `tnf_up{node="node2",source="pacemaker"} 0`) {
		t.Errorf("node2's metrics in its bundle:\n%s", stopped.members["metrics.txt"])
	}

	// A setup run that waits for node2, whose Corosync is stopped, and fails: the metrics say it
	// waits, then status, the metrics and the next bundle say why it failed.
	setup := make(chan error, 1)
	go func() {
		out, err := c.tnfctl("node1", "setup", "--wait", "30s")
		if err == nil {
			err = fmt.Errorf("setup on node1 with node2's Corosync stopped: no error\n%s", out)
		} else {
			err = nil
		}
		setup <- err
	}()
	c.waitFor("node1's setup waiting for node2, in its metrics", 25*time.Second, func() (bool, string) {
		families, err := c.scrape(c.metricsAddr("node1"))
		if err != nil {
			return false, err.Error()
		}
		want := `tnf_setup_state{node="node1",state="waiting_for_peer"} 1`
		return slices.Contains(series(families["tnf_setup_state"]), want), "not yet"
	})
	if err := <-setup; err != nil {
		t.Fatal(err)
	}
	if out, _ := c.tnfctl("node1", "status"); !strings.Contains(out, "Setup:     FAILED: ") {
		t.Errorf("tnfctl status on node1 after a failed setup:\n%s", out)
	}
	c.assertMetric("node1", `tnf_setup_state{node="node1",state="failed"} 1`)
	// node1 was set up before and serves alone: its status leads with that, not "setup failed",
	// and TNFSetupFailed (critical: "the node stays inert"), which reads tnf_health_state, stays
	// silent.
	if st, err := c.statusJSON("node1"); err != nil || st.State != health.Degraded {
		t.Errorf("tnfctl status on node1, serving alone after a failed re-run of setup: %+v, %v; want %s", st, err, health.Degraded)
	}
	c.assertMetric("node1", `tnf_health_state{node="node1",state="setup-failed"} 0`)
	failedSetup := c.gather("node1")
	t.Logf("node1's tnf/setup.failed: %s", failedSetup.members["tnf/setup.failed"])
	if len(failedSetup.members["tnf/setup.failed"]) == 0 {
		t.Error("node1's bundle after a failed setup has no tnf/setup.failed")
	}

	key, err := os.ReadFile(filepath.Join(c.layout.Nodes["node1"].Dir, "disk", "etc", "tnf", "secrets", "corosync-authkey"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(key)))
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string][]byte{"node1's BMC password": []byte(c.password("node1")), "node2's BMC password": []byte(c.password("node2")),
		"the Corosync key (base64)": bytes.TrimSpace(key), "the Corosync key": raw}
	for node, b := range map[string]bundle{"node1": serving, "node2": stopped, "node1 after its failed setup": failedSetup} {
		for name, data := range b.members {
			for what, s := range secrets {
				if bytes.Contains(data, s) {
					t.Errorf("%s's bundle: %s holds %s", node, name, what)
				}
			}
		}
	}
}

type bundle struct {
	members map[string][]byte
	missing map[string]string // name → why
}

// gather runs tnfctl gather on node into the cluster's folder and reads the bundle.
func (c *cluster) gather(node string) bundle {
	c.t.Helper()
	path := filepath.Join(c.dir, node+"-gather.tar.gz")
	out, err := c.tnfctl(node, "gather", "--file", path)
	if err != nil {
		c.t.Fatalf("tnfctl gather on %s: %v\n%s", node, err, out)
	}
	c.t.Logf("tnfctl gather on %s: %s", node, strings.TrimSpace(out))
	members, err := gather.Read(path)
	if err != nil {
		c.t.Fatal(err)
	}
	var m gather.Manifest
	if err := json.Unmarshal(members["manifest.json"], &m); err != nil {
		c.t.Fatal(err)
	}
	b := bundle{members: members, missing: map[string]string{}}
	for _, x := range m.Missing {
		b.missing[x.Name] = x.Reason
	}
	return b
}
