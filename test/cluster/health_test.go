//go:build integration

package cluster_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcsconfig"
)

// TestFailoverOff: each setting an administrator leaves behind after maintenance, set with pcs on
// a serving pair, reads on both nodes as failover-off (exit 6), naming the setting and the
// command that undoes it, and in both nodes' metrics (tnf_failover_off, tnf_health_state);
// undone, both read healthy again. A node whose Corosync is stopped reads corosync-down, in JSON
// too (exit 5), while its peer reads degraded. Writes go on throughout; nobody is fenced.
func TestFailoverOff(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	w := c.upAndWriting()
	c.waitHealth(health.Healthy)
	fence := pcsconfig.FenceDevice("node2")
	for _, tc := range []struct {
		set, undo string
		cause     health.Cause
	}{
		{"property set maintenance-mode=true", "property set maintenance-mode=false", health.Cause{Kind: health.CauseMaintenanceMode}},
		{"property set stonith-enabled=false", "property set stonith-enabled=true", health.Cause{Kind: health.CauseFencingDisabled}},
		{"node standby node2", "node unstandby node2", health.Cause{Kind: health.CauseNodeStandby, Subject: "node2"}},
		{"node maintenance node2", "node unmaintenance node2", health.Cause{Kind: health.CauseNodeMaintenance, Subject: "node2"}},
		{"resource unmanage kubelet-clone", "resource manage kubelet-clone", health.Cause{Kind: health.CauseUnmanaged, Subject: "kubelet-clone"}},
		{"stonith disable " + fence, "stonith enable " + fence, health.Cause{Kind: health.CauseDisabled, Subject: fence}},
	} {
		tc.cause.Undo = "pcs " + tc.undo
		c.pcs("node1", strings.Fields(tc.set)...)
		for _, node := range c.nodes {
			c.waitFor(fmt.Sprintf("%s: failover off on %s, in status and metrics", tc.set, node), settle, func() (bool, string) {
				st, err := c.statusJSON(node)
				if err != nil || st.State != health.FailoverOff || !slices.Contains(st.FailoverOff, tc.cause) {
					return false, fmt.Sprint(st, err)
				}
				series, err := c.healthSeries(node)
				return err == nil && slices.Contains(series, fmt.Sprintf(`tnf_failover_off{cause=%q,subject=%q} 1`, tc.cause.Kind, tc.cause.Subject)) &&
					slices.Contains(series, fmt.Sprintf(`tnf_health_state{node=%q,state="failover-off"} 1`, node)), fmt.Sprint(series, err)
			})
		}
		if _, code, err := c.statusRun("node1"); err != nil || code != health.ExitFailoverOff {
			t.Errorf("%s: status exits %d (%v), want %d", tc.set, code, err, health.ExitFailoverOff)
		}
		c.pcs("node1", strings.Fields(tc.undo)...)
		c.waitHealth(health.Healthy)
		c.waitWrites(w, tc.undo)
	}

	c.power("cluster-stop", "node2")
	c.waitFor("corosync-down on node2, degraded on node1", settle, func() (bool, string) {
		st2, err2 := c.statusJSON("node2")
		st1, err1 := c.statusJSON("node1")
		return err2 == nil && st2.State == health.CorosyncDown && err1 == nil && st1.State == health.Degraded, fmt.Sprint(st2, err2, st1, err1)
	})
	if out, code, err := c.statusRun("node2"); err != nil || code != health.ExitNotServing || !strings.HasPrefix(out, "COROSYNC NOT ANSWERING") {
		t.Errorf("status with Corosync stopped exits %d (%v), want %d:\n%s", code, err, health.ExitNotServing, out)
	}
	c.power("cluster-start", "node2")
	c.waitHealth(health.Healthy)
	c.stopAndCheck(w)
	c.assertPlanned()
}

// healthStatus is what the test reads of tnfctl status -o json.
type healthStatus struct {
	State       health.State   `json:"state"`
	Summary     string         `json:"summary"`
	FailoverOff []health.Cause `json:"failoverOff"`
}

// statusJSON is tnfctl status -o json on node.
func (c *cluster) statusJSON(node string) (healthStatus, error) {
	var st healthStatus
	return st, c.decodeStatus(node, &st)
}

// decodeStatus decodes tnfctl status -o json on node into v.
func (c *cluster) decodeStatus(node string, v any) error {
	out, _, err := c.statusRun(node, "-o", "json")
	if err == nil {
		err = json.Unmarshal([]byte(out), v)
	}
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// waitHealth waits until both nodes' status reads state.
func (c *cluster) waitHealth(state health.State) {
	c.t.Helper()
	for _, node := range c.nodes {
		c.waitState(node, string(state))
	}
}

// healthSeries are node's tnf_health_state, tnf_failover_off and tnf_handover_pending series.
func (c *cluster) healthSeries(node string) ([]string, error) {
	return c.seriesOf(node, "tnf_health_state", "tnf_failover_off", "tnf_handover_pending")
}

// seriesOf are the series of the named families node's metrics endpoint serves (series's lines).
func (c *cluster) seriesOf(node string, names ...string) ([]string, error) {
	families, err := c.scrape(c.metricsAddr(node))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		if f, ok := families[name]; ok {
			out = append(out, series(f)...)
		}
	}
	return out, nil
}

// checkHandoverPending checks that node's metrics say whether its handover is pending.
func (c *cluster) checkHandoverPending(node string, pending bool) {
	c.t.Helper()
	want := fmt.Sprintf(`tnf_handover_pending{node=%q} %d`, node, map[bool]int{false: 0, true: 1}[pending])
	c.waitFor(node+": "+want, settle, func() (bool, string) {
		series, err := c.healthSeries(node)
		return err == nil && slices.Contains(series, want), fmt.Sprint(series, err)
	})
}
