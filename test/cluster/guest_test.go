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

	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
)

// TestGuestOnField: the layer rolled out onto a cluster whose Pacemaker the cluster-etcd-operator's
// jobs configured (OpenShift's own stack, newFieldCluster). Setup makes both nodes guests and
// writes nothing of the cluster: corosync.conf, the resources, the constraints and the fencing
// levels stay the operator's; the handover does nothing. Status and the metrics read the
// operator's configuration: healthy with podman-etcd's two voters, its fence devices named as
// unchecked (they run with ssl_insecure=1). Through a power cut of node2, node1's status never
// reads healthy while node2 is away, and reads healthy again once node2's member is a voter.
func TestGuestOnField(t *testing.T) {
	t.Parallel()
	c := newFieldCluster(t)
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		n.Guest = true
		c.layout.Nodes[name] = n
	}
	c.writeLayout()
	conf := readFile(c.layout.Nodes["node1"].path("disk", "etc", "corosync", "corosync.conf"))
	operator := c.cibShape("env", "CIB_file="+c.layout.Nodes["node1"].path("disk", "var-lib", "pacemaker", "cib", "cib.xml"))
	c.fieldUp()
	for _, node := range c.nodes {
		marker := c.layout.Nodes[node].path("disk", "var-lib", "tnf", "guest")
		c.waitFor(node+"'s setup records it a guest", settle, func() (bool, string) {
			data := readFile(marker)
			return strings.Contains(data, "cluster-etcd-operator"), data
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
	c.checkGuestSeries("node1", `tnf_guest{node="node1"} 1`, `tnf_setup_state{node="node1",state="guest"} 1`,
		`tnf_etcd_role{node="node1",role="voter"} 1`, `tnf_etcd_role{node="node2",role="voter"} 1`,
		`tnf_fence_device_unchecked{device="node1_redfish"} 1`, `tnf_fence_device_unchecked{device="node2_redfish"} 1`)

	c.power("off", "node2")
	seen := map[health.State]bool{}
	c.waitFor("node1's status reads node2 away", settle, func() (bool, string) {
		st := c.guestStatus("node1")
		seen[st.State] = true
		return st.State != health.Healthy, st.Summary
	})
	c.waitBooted("node2")
	c.waitVoters()
	c.waitHealth(health.Healthy)
	if st := c.guestStatus("node1"); st.Pacemaker == nil || st.Pacemaker.Fencing.Successes("node2") == 0 {
		t.Errorf("node1's status shows no fencing of node2: %+v", st.Pacemaker)
	}
	c.checkOperatorConfiguration(conf, operator)
	c.checkGuestSeries("node1", `tnf_etcd_role{node="node1",role="voter"} 1`, `tnf_etcd_role{node="node2",role="voter"} 1`)
	t.Logf("node1's states while node2 was away: %v", seen)
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
