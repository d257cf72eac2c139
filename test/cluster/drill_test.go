//go:build integration

package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// setMachineConfigState annotates node's Node object as MCO's machine-config-daemon does (a
// stand-in: no MCO runs here): its state and its current and desired configurations.
func (c *cluster) setMachineConfigState(node, state, current, desired string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes := c.apiClient("node1").CoreV1().Nodes()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations["machineconfiguration.openshift.io/state"] = state
		n.Annotations["machineconfiguration.openshift.io/currentConfig"] = current
		n.Annotations["machineconfiguration.openshift.io/desiredConfig"] = desired
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		c.t.Fatal(err)
	}
}

// fenceDrill runs tnfctl fence-drill on node with args, reading the cluster's state every second.
func (c *cluster) fenceDrill(node string, args ...string) (string, error) {
	argv := append([]string{c.tnfctlPath(node), "fence-drill", "--kubeconfig", c.adminKubeconfig(node, recoveryKubeconfig), "--interval", "1s"}, args...)
	return c.runWithin(node, 10*time.Minute, nil, argv...)
}

// fenceProven is when tnfctl status on node says each node's fencing was last proven.
func (c *cluster) fenceProven(node string) map[string]time.Time {
	c.t.Helper()
	out, _, err := c.statusRun(node, "-o", "json")
	var st struct {
		FenceProven map[string]time.Time `json:"fenceProven"`
	}
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		c.t.Fatalf("tnfctl status -o json on %s: %v\n%s", node, err, out)
	}
	return st.FenceProven
}

// TestFenceDrill: tnfctl fence-drill refuses while it cannot read MCO's state of both nodes,
// while one of them rolls a configuration out, and without --yes and a terminal, fencing
// nothing; then, run on node1 and later on node2 while the writer goes on, each fences the
// other for real through its BMC, records the proof and returns once both nodes are healthy
// again. Status then shows both nodes' fencing proven, with no drill due, and every write etcd
// acknowledged is on both nodes.
func TestFenceDrill(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newAPICluster(t, nil)
	c.upWithAPI()
	w := c.writing()
	for _, n := range c.nodes {
		c.waitState(n, "healthy")
	}
	if proven := c.fenceProven("node1"); len(proven) != 0 {
		t.Fatalf("before any fencing, status shows fencing proven: %v", proven)
	}
	if out, _, err := c.statusRun("node1"); err != nil || !strings.Contains(out, "proven: node1 never (due: tnfctl fence-drill on node2); node2 never (due: tnfctl fence-drill on node1)") {
		t.Fatalf("tnfctl status before any fencing: %v\n%s", err, out)
	}
	refusal := func(code int, says string) {
		t.Helper()
		out, err := c.fenceDrill("node1")
		if !exitedWith(err, code) || !strings.Contains(out, says) {
			t.Fatalf("tnfctl fence-drill: %v, want exit %d saying %q\n%s", err, code, says, out)
		}
	}
	refusal(3, "node1 has no machine-config-daemon state; node2 has no machine-config-daemon state")
	c.setMachineConfigState("node1", "Done", "rendered-master-a", "rendered-master-a")
	c.setMachineConfigState("node2", "Working", "rendered-master-a", "rendered-master-b")
	refusal(3, "MCO is rolling a configuration out (node2's machine-config-daemon is Working)")
	c.setMachineConfigState("node2", "Done", "rendered-master-b", "rendered-master-b")
	refusal(1, "pass --yes")
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})

	for _, d := range []struct{ by, target string }{{"node1", "node2"}, {"node2", "node1"}} {
		began := time.Now()
		out, err := c.fenceDrill(d.by, "--yes")
		if err != nil || !strings.Contains(out, d.target+" fenced after") || !strings.Contains(out, d.target+" is back and both nodes are healthy") {
			t.Fatalf("tnfctl fence-drill on %s: %v\n%s", d.by, err, out)
		}
		t.Logf("tnfctl fence-drill on %s (%v; writes' longest gap %v):\n%s", d.by, time.Since(began).Round(time.Second),
			w.LongestGap(began, time.Now()).Round(10*time.Millisecond), out)
		if at, ok := c.fenceProven(d.by)[d.target]; !ok || at.Before(began.Truncate(time.Second)) {
			t.Fatalf("after the drill on %s, status shows %s's fencing proven at %v (%v), want after %v", d.by, d.target, at, ok, began)
		}
		c.waitState(d.target, "healthy")
	}
	c.assertFenced("node2", map[string]int{"node1": 1, "node2": 1})
	if out, _, err := c.statusRun("node2"); err != nil || strings.Contains(out, "due:") || !strings.Contains(out, "proven: node1 at ") {
		t.Fatalf("tnfctl status after both drills: %v\n%s", err, out)
	}
	acked := w.Stop()
	c.waitSameData()
	for _, n := range c.nodes {
		c.checkAcked(acked, n)
	}
}
