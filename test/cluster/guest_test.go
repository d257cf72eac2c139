//go:build integration

package cluster_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
)

// TestGuestOnField: the layer rolled out onto a cluster whose Pacemaker the cluster-etcd-operator's
// jobs configured (OpenShift's own stack, newFieldCluster). Setup makes both nodes guests and
// writes nothing of the cluster: corosync.conf, the resources, the constraints and the fencing
// levels stay the operator's; the handover does nothing. Status and the metrics read the
// operator's configuration: healthy with podman-etcd's two voters, its fence devices named as
// unchecked (they run with ssl_insecure=1); fence-check --device checks one without sending its
// password to the unchecked BMC. Then, while a client writes through both nodes'
// etcd: the operator's jobs run again as at its upgrade (nothing to change) and as after a
// fencing Secret's change (node2's BMC password changed: the job updates node2_redfish), node2
// loses its power (its fencing uses the new password) and the cluster link is cut (node1 wins
// the fence race). Through each, node1's status never reads healthy while node2 is away, and
// reads healthy again once node2's member is a voter; the operator's configuration is what its
// jobs made, the nodes are still guests, and every acknowledged write is there.
func TestGuestOnField(t *testing.T) {
	t.Parallel()
	c := newGuestCluster(t, nil)
	conf := readFile(c.layout.Nodes["node1"].path("disk", "etc", "corosync", "corosync.conf"))
	operator := c.cibShape("env", "CIB_file="+c.layout.Nodes["node1"].path("disk", "var-lib", "pacemaker", "cib", "cib.xml"))
	c.fieldUp()
	markers := map[string]string{}
	for _, node := range c.nodes {
		marker := c.layout.Nodes[node].path("disk", "var-lib", "tnf", "guest")
		c.waitFor(node+"'s setup records it a guest", settle, func() (bool, string) {
			markers[node] = readFile(marker)
			return strings.Contains(markers[node], "cluster-etcd-operator"), markers[node]
		})
	}
	c.checkOperatorConfiguration(conf, operator)
	c.waitHealth(health.Healthy)
	for _, node := range c.nodes {
		st := c.guestStatus(node)
		if !strings.Contains(st.Guest, "cluster-etcd-operator") || !slices.Equal(st.UncheckedBMC, []string{"node1_redfish", "node2_redfish"}) {
			t.Errorf("%s: status -o json: guest %q, unchecked BMCs %v", node, st.Guest, st.UncheckedBMC)
		}
		if out, _, err := c.statusRun(node); err != nil || !strings.Contains(out, "\nMode:      guest: Pacemaker is configured by the cluster-etcd-operator") ||
			!strings.Contains(out, "UNCHECKED: node1_redfish") {
			t.Errorf("%s: tnfctl status: %v\n%s", node, err, out)
		}
		if out, err := c.tnfctl(node, "handover"); err != nil || !strings.Contains(out, "none on a guest node") {
			t.Errorf("%s: tnfctl handover on a guest: %v\n%s", node, err, out)
		}
	}
	// The operator's device for node2, checked as it holds its credential: its certificate is
	// unchecked (ssl_insecure=1), so no password goes out, and the BMC's certificate, from the
	// harness's own CA, is not one this node's CAs verify.
	out, err := c.tnfctl("node1", "fence-check", "--device", "node2_redfish")
	if strings.Contains(out, c.password("node2")) {
		t.Fatal("fence-check --device node2_redfish printed the device's password") // and not its output
	}
	if err == nil || !strings.Contains(out, "redfish: FAILED: the BMC's certificate is neither verified nor pinned") ||
		!strings.Contains(out, "SHA-256 "+c.bmcPin) || !strings.Contains(out, "this node's CAs do not verify it") ||
		!strings.Contains(out, "fence_redfish: FAILED: the BMC's certificate is neither verified nor pinned") {
		t.Errorf("fence-check --device node2_redfish: %v\n%s", err, out)
	}
	if out, err := c.tnfctl("node1", "fence-check", "--device", "kubelet"); err == nil || !strings.Contains(out, "--device: no fence device kubelet") {
		t.Errorf("fence-check --device kubelet: %v\n%s", err, out)
	}
	c.checkGuestSeries("node1", `tnf_guest{node="node1"} 1`, `tnf_setup_state{node="node1",state="guest"} 1`,
		`tnf_etcd_role{node="node1",role="voter"} 1`, `tnf_etcd_role{node="node2",role="voter"} 1`,
		`tnf_fence_device_unchecked{device="node1_redfish"} 1`, `tnf_fence_device_unchecked{device="node2_redfish"} 1`)
	w := c.writing()

	// The operator's upgrade: every job again, the single ones on one node, update-setup on both.
	changed := append(c.rerunSetupJob("node1"), c.rerunFencingJob("node2")...)
	for _, node := range c.nodes {
		c.rerunUpdateSetup(node)
	}
	if len(changed) > 0 {
		t.Errorf("the operator's jobs changed a cluster they made: %v", changed)
	}
	c.checkGuestAfterJobs(conf, operator, markers)

	// A fencing Secret's change: node2's BMC takes a new password, the fencing job follows.
	c.setBMCPassword("node2", fieldPassword(bmcPassword()))
	c.restartEmulator()
	if changed := c.rerunFencingJob("node1"); !slices.Equal(changed, []string{"pcs stonith update node2_redfish"}) {
		t.Errorf("the fencing job after node2's Secret changed: %v, want node2_redfish updated", changed)
	}
	c.checkGuestAfterJobs(conf, operator, markers)

	c.guestPeerAway("power cut", func() { c.power("off", "node2") }, func() {})
	c.guestPeerAway("link cut", func() { c.link("down") }, func() { c.link("up") })
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 2})
	c.checkGuestAfterJobs(conf, operator, markers)
	c.stopAndCheck(w)
}

// newGuestCluster is a field cluster (newFieldCluster) whose nodes also run the layer: their
// boot starts its metrics and its setup, which makes them guests.
func newGuestCluster(t *testing.T, change func(*clusterconfig.Config)) *cluster {
	c := newFieldCluster(t, change)
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		n.Guest = true
		c.layout.Nodes[name] = n
	}
	c.writeLayout()
	return c
}

// TestGuestFencingFails: on a guest, a fencing Secret's change reached the BMC and the layer's
// copy, and not yet the operator's fence device (its fencing job has not run again). node2 loses
// its power: node1's fencing of it fails on the old password, so podman-etcd holds etcd, and
// node1's status says BLOCKED with the way out, the layer's confirm-peer-down, which needs no
// API (the field's way, pcs stonith confirm through oc debug, needs one). auto-unblock, enabled,
// reads node2's BMC with the layer's copy of the password: Off twice, so it confirms node2 down
// and node1's status leaves BLOCKED, node2 fenced once (the confirmation). node2 comes back, the
// fencing job updates node2_redfish (it cannot while node2 is off), node1's etcd takes writes
// and node2's rejoins; both read healthy, every acknowledged write is there, and the operator's
// configuration is what its jobs made.
func TestGuestFencingFails(t *testing.T) {
	t.Parallel()
	c := newGuestCluster(t, func(cfg *clusterconfig.Config) {
		cfg.AutoUnblock = clusterconfig.AutoUnblock{Enabled: true, After: duration.Duration{Duration: 10 * time.Second}}
	})
	conf := readFile(c.layout.Nodes["node1"].path("disk", "etc", "corosync", "corosync.conf"))
	operator := c.cibShape("env", "CIB_file="+c.layout.Nodes["node1"].path("disk", "var-lib", "pacemaker", "cib", "cib.xml"))
	c.fieldUp()
	markers := map[string]string{}
	for _, node := range c.nodes {
		c.waitFor(node+"'s setup records it a guest", settle, func() (bool, string) {
			markers[node] = readFile(c.layout.Nodes[node].path("disk", "var-lib", "tnf", "guest"))
			return markers[node] != "", ""
		})
	}
	c.waitHealth(health.Healthy)
	w := c.writing()

	c.setBMCPassword("node2", fieldPassword(bmcPassword()))
	c.restartEmulator()
	c.power("off", "node2")
	ff := c.waitFencingFails("node1", "node2", "")
	t.Logf("node1's status while node2's fencing fails: %s (%s)", ff.Advice, ff.BMC)
	if out, _, err := c.statusRun("node1"); err != nil || !strings.Contains(out, "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs stonith confirm node2`)") {
		t.Errorf("tnfctl status on node1 lacks the way out: %v\n%s", err, out)
	}
	c.assertNoWrite("node1")
	c.assertMetric("node1", `tnf_fencing_failing{target="node2"} 1`)
	autoUnblock := func() (string, error) { return c.tnfctl("node1", "auto-unblock", "--gap", "2s") }
	if out, err := autoUnblock(); err != nil || !strings.Contains(out, "waited alone 0s") {
		t.Fatalf("auto-unblock, first pass: %v\n%s", err, out)
	}
	time.Sleep(11 * time.Second)
	out, err := autoUnblock()
	if err != nil || !strings.Contains(out, "confirmed fenced") {
		t.Fatalf("auto-unblock with the layer's password, node2 off: %v\n%s", err, out)
	}
	c.assertMetric("node1", `tnf_auto_unblock_decisions_total{node="node1",outcome="confirmed"} 1`)
	c.waitFor("node1's status no longer blocked on node2's fencing", settle, func() (bool, string) {
		st := c.guestStatus("node1")
		return st.State != health.Blocked, st.Summary
	})
	t.Logf("auto-unblock:\n%s", out)

	if n := c.fences("node1", "node2"); n != 1 {
		t.Errorf("node1's history holds %d fencings of node2, want 1 (the confirmation)", n)
	}

	// The operator's configuration leaves a stale device failing for good: with
	// start-failure-is-fatal=false and no failure-timeout, Pacemaker restarts node2_redfish every
	// second or two, and each failed start aborts the transition that holds podman-etcd's
	// recovery (seen starving node1's for 8 minutes). Its fencing job cannot mend it while node2
	// is off: its credential check, fence_redfish --action status, exits 2 for Off, which the job
	// takes as a failure. So node2 comes back first, then the job runs; what follows is
	// podman-etcd's.
	c.power("on", "node2")
	if changed := c.rerunFencingJob("node1"); !slices.Equal(changed, []string{"pcs stonith update node2_redfish"}) {
		t.Errorf("the fencing job after node2's Secret changed: %v, want node2_redfish updated", changed)
	}
	t.Logf("first write on node1 %v after the fencing job", c.writeWithin("node1", "after-auto-unblock", fieldRejoin).Round(10*time.Millisecond))
	c.waitVoters()
	c.checkGuestAfterJobs(conf, operator, markers)
	c.stopAndCheck(w)
}

// checkGuestAfterJobs checks, once both nodes are back, that the configuration is still the
// operator's (checkOperatorConfiguration), both nodes the guests they were (markers: their
// records) and healthy, and the operator's node-event job (update-setup) finds nothing to do.
func (c *cluster) checkGuestAfterJobs(conf string, operator []string, markers map[string]string) {
	c.t.Helper()
	c.checkOperatorConfiguration(conf, operator)
	c.waitHealth(health.Healthy)
	for _, node := range c.nodes {
		if got := readFile(c.layout.Nodes[node].path("disk", "var-lib", "tnf", "guest")); got != markers[node] {
			c.t.Errorf("%s: the guest record changed:\n%s", node, got)
		}
		c.rerunUpdateSetup(node)
	}
}

// guestPeerAway takes node2 away by cut and, once node1 fenced it and its fence's reboot
// brought it up, heals: node1's status must not read healthy meanwhile, and both nodes must read
// healthy with two voters afterwards.
func (c *cluster) guestPeerAway(fault string, cut, heal func()) {
	c.t.Helper()
	fenced := c.fences("node1", "node2")
	cut()
	seen := map[health.State]bool{}
	c.waitFor("node1's status reads node2 away", settle, func() (bool, string) {
		st := c.guestStatus("node1")
		seen[st.State] = true
		return st.State != health.Healthy, st.Summary
	})
	c.waitFencedAgain("node1", "node2", fenced)
	c.waitBooted("node2")
	heal()
	c.waitVoters()
	c.waitHealth(health.Healthy)
	c.t.Logf("node1's states through node2's %s: %v", fault, seen)
}

// TestDualReplicaBeforeOperator: the layer arrives with the installation on a DualReplica
// cluster, before the cluster-etcd-operator's jobs have configured Pacemaker (nothing of theirs on
// the nodes yet). The Infrastructure object says DualReplica, so setup makes both nodes guests
// as soon as it reads the API, and writes nothing of a cluster: no corosync.conf, no Corosync
// key; the installer's etcd goes on serving.
func TestDualReplicaBeforeOperator(t *testing.T) {
	t.Parallel()
	c := newInstalledCluster(t)
	c.power("on", "node1")
	c.power("on", "node2")
	for _, n := range c.nodes {
		c.waitAPIReady(n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kubeapi.RegisterInfrastructure(ctx, c.restConfig("node1"), configv1.DualReplicaTopologyMode); err != nil {
		t.Fatal(err)
	}
	w := c.writing()
	c.waitAPIsAndDeliverSecrets()
	for _, node := range c.nodes {
		n := c.layout.Nodes[node]
		c.waitFor(node+"'s setup makes it a guest from the API", settle, func() (bool, string) {
			data := readFile(n.path("disk", "var-lib", "tnf", "guest"))
			return strings.Contains(data, "controlPlaneTopology DualReplica"), data + readFile(n.path("log", "setup.out"))
		})
		for _, f := range []string{"corosync.conf", "authkey"} {
			if _, err := os.Stat(n.path("disk", "etc", "corosync", f)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: /etc/corosync/%s written on a guest (%v)", node, f, err)
			}
		}
		if st := c.guestStatus(node); !strings.Contains(st.Guest, "the Infrastructure object says") {
			t.Errorf("%s: tnfctl status -o json: guest %q (%s)", node, st.Guest, st.Summary)
		}
	}
	c.stopAndCheck(w)
}

// guestReading is what the guest scenario reads of tnfctl status -o json.
type guestReading struct {
	healthStatus
	Guest        string       `json:"guest"`
	UncheckedBMC []string     `json:"uncheckedBMC"`
	Pacemaker    *pcmk.Status `json:"pacemaker"`
}

// guestStatus is tnfctl status -o json on node; a status that cannot be read fails the test.
func (c *cluster) guestStatus(node string) guestReading {
	c.t.Helper()
	var st guestReading
	if err := c.decodeStatus(node, &st); err != nil {
		c.t.Fatalf("%s: tnfctl status -o json: %v", node, err)
	}
	return st
}

// checkOperatorConfiguration checks that both nodes still have the operator's corosync.conf
// (conf), the resources and constraints of its CIB (operator: cibShape's) and no fencing level.
func (c *cluster) checkOperatorConfiguration(conf string, operator []string) {
	c.t.Helper()
	for _, node := range c.nodes {
		if got := readFile(c.layout.Nodes[node].path("disk", "etc", "corosync", "corosync.conf")); got != conf {
			c.t.Errorf("%s: corosync.conf is not the operator's any more:\n%s", node, got)
		}
		if got := c.cibShape("nsenter", "-t", fmt.Sprint(c.layout.Nodes[node].holder()), "-m", "-n", "-u", "--"); !slices.Equal(got, operator) {
			c.t.Errorf("%s: the CIB's resources and constraints are not the operator's:\n got %v\nwant %v", node, got, operator)
		}
		if out, err := c.run(node, "cibadmin", "--query", "--scope", "fencing-topology"); !exitedWith(err, pcmk.ExitNoSuch) {
			c.t.Errorf("%s: fencing levels where the operator makes none: %v\n%s", node, err, out)
		}
	}
}

// cibShape is what the layer must never change of the operator's CIB, read by cibadmin run
// through prefix (env CIB_file=... for the file the operator's job wrote, nsenter for a node's live
// one): each resource and constraint element with its id, class, provider and type, in document
// order. Attribute values are left out: podman-etcd and `pcs resource enable` change the etcd
// clone's meta attributes as the field runs.
func (c *cluster) cibShape(prefix ...string) []string {
	c.t.Helper()
	var shape []string
	for _, scope := range []string{"resources", "constraints"} {
		out := c.must(append(prefix, "cibadmin", "--query", "--scope", scope)...)
		d := xml.NewDecoder(strings.NewReader(out))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				c.t.Fatalf("cibadmin --scope %s: %v", scope, err)
			}
			el, ok := tok.(xml.StartElement)
			if !ok || !slices.Contains([]string{"primitive", "clone", "group", "rsc_order", "rsc_colocation", "rsc_location"}, el.Name.Local) {
				continue
			}
			desc := []string{el.Name.Local}
			for _, a := range el.Attr {
				if slices.Contains([]string{"id", "class", "provider", "type", "first", "then", "rsc", "with-rsc"}, a.Name.Local) {
					desc = append(desc, a.Name.Local+"="+a.Value)
				}
			}
			shape = append(shape, strings.Join(desc, " "))
		}
	}
	return shape
}

// checkGuestSeries waits until node's metrics endpoint serves each of want.
func (c *cluster) checkGuestSeries(node string, want ...string) {
	c.t.Helper()
	c.waitFor(node+"'s metrics on a guest", settle, func() (bool, string) {
		all, err := c.seriesOf(node, "tnf_guest", "tnf_setup_state", "tnf_etcd_role", "tnf_fence_device_unchecked")
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if !slices.Contains(all, w) {
				return false, strings.Join(all, "\n")
			}
		}
		return true, ""
	})
}
