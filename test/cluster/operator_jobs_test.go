//go:build integration

package cluster_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
)

// The cluster-etcd-operator's two-node jobs run again on a running cluster, as the operator reruns
// them (cluster-etcd-operator pkg/tnf, main and release-4.22): every job at an operator upgrade
// (a new image changes each job's spec), the fencing job when a fencing Secret's data changes,
// update-setup on each node at a node event. Their commands run on a node through nsenter, as
// the jobs run theirs on the host, but with their arguments as argv: the jobs pass each command
// line through bash -c (pkg/tnf/pkg/pcs/fencing.go: the credential check's --password unquoted,
// pcs's password= quoted for Go, not for the shell), so a password holding a space, $ or a
// backquote reaches fence_redfish and pcs changed there: a trap of theirs that the harness's
// passwords, which hold all three, would show. The fence delays are main's and 4.22's (10 s on
// the first node, 1 s on the second). Each returns what it changed. Left out: the alerts step
// (its scripts come with the operator's image) and update-setup's removal and re-adding of an
// Offline node, which only a replaced node leaves behind (pcs cluster node remove and add talk
// to pcsd, which the harness's nodes do not run).

// operatorDevice is a stonith device as `pcs stonith config --output-format json` gives it.
type operatorDevice struct {
	ID        string `json:"id"`
	AgentName struct {
		Type string `json:"type"`
	} `json:"agent_name"`
	InstanceAttributes []struct {
		NVPairs []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"nvpairs"`
	} `json:"instance_attributes"`
}

// has says whether the device is a fence_redfish with each of options (name=value), the
// operator's comparison (canFencingConfigBeSkipped): the job leaves such a device alone.
func (d operatorDevice) has(options []string) bool {
	var set []string
	for _, attrs := range d.InstanceAttributes {
		for _, nv := range attrs.NVPairs {
			set = append(set, nv.Name+"="+nv.Value)
		}
	}
	for _, o := range options {
		if !slices.Contains(set, o) {
			return false
		}
	}
	return d.AgentName.Type == "fence_redfish"
}

// operatorFenceOptions are the options of the i-th node's (in name order) fence device as the
// operator's fencing job writes them: the first node's delayed 10 s (the race winner), the
// certificate unchecked as with certificateVerification Disabled. The password comes from the
// node's fencing Secret: here, the emulator's password file.
func (c *cluster) operatorFenceOptions(i int, node string) []string {
	return []string{"username=" + bmcUser, "password=" + c.password(node), "ip=" + bmcIP, "ipport=" + bmcPort,
		"systems_uri=/redfish/v1/Systems/" + node, "pcmk_host_list=" + node, "pcmk_delay_base=" + []string{"10s", "1s"}[i], "ssl_insecure=1"}
}

// rerunSetupJob runs on node what the operator's setup job runs on a cluster it finds made
// (RunTnfSetup): `pcs resource config` names kubelet-clone, so no `pcs cluster setup`; then the
// fencing step, and the etcd and constraint steps, each skipped because `pcs resource status`
// and `pcs constraint` mention etcd. A guard that would not skip fails the test: the real job
// would make its resources or constraints again.
func (c *cluster) rerunSetupJob(node string) []string {
	c.t.Helper()
	if out, _ := c.run(node, "pcs", "resource", "config"); !strings.Contains(out, "kubelet-clone") {
		c.t.Fatalf("%s: pcs resource config names no kubelet-clone: the setup job would destroy the cluster and make it again:\n%s", node, out)
	}
	changed := c.rerunFencingJob(node)
	for _, guard := range [][]string{{"resource", "status"}, {"constraint"}} {
		if out, err := c.run(node, append([]string{"pcs"}, guard...)...); err != nil || !strings.Contains(out, "etcd") {
			c.t.Errorf("%s: pcs %s does not mention etcd (%v): the setup job would add its etcd step's objects again:\n%s", node, strings.Join(guard, " "), err, out)
		}
	}
	return changed
}

// rerunFencingJob runs on node what the operator's fencing job runs (ConfigureFencing): each
// node's <node>_redfish device compared with what its Secret says and, where it differs, the
// credential checked with fence_redfish and the device created or updated; every other stonith
// device deleted. The job passes the password on pcs's command line: the stand-in does too,
// since pcs takes it no other way (the credential check reads it on stdin, which the
// operator's does not).
func (c *cluster) rerunFencingJob(node string) []string {
	c.t.Helper()
	out, err := c.run(node, "pcs", "stonith", "config", "--output-format", "json")
	var config struct {
		Primitives []operatorDevice `json:"primitives"`
	}
	// pcs warns on stderr that the fencing levels have no JSON: the JSON is the first value.
	if i := strings.Index(out, "{"); err == nil && i >= 0 {
		err = json.NewDecoder(strings.NewReader(out[i:])).Decode(&config)
	} else if err == nil {
		err = errors.New("no JSON in its output")
	}
	if err != nil { // not its output: it holds the passwords
		c.t.Fatalf("%s: pcs stonith config --output-format json: %v", node, err)
	}
	var changed, wanted []string
	for i, target := range c.nodes {
		id := target + "_redfish"
		wanted = append(wanted, id)
		options := c.operatorFenceOptions(i, target)
		verb := "create"
		if j := slices.IndexFunc(config.Primitives, func(d operatorDevice) bool { return d.ID == id }); j >= 0 {
			if config.Primitives[j].has(options) {
				continue
			}
			verb = "update"
		}
		check := fencerun.Call{Action: "status"}
		for _, o := range options {
			if name, value, _ := strings.Cut(o, "="); !strings.HasPrefix(name, "pcmk_") { // Pacemaker's, not the agent's
				check.Options = append(check.Options, fencerun.Option{Name: name, Value: value})
			}
		}
		input, err := check.Stdin()
		if err != nil {
			c.t.Fatal(err)
		}
		if out, err := c.runInput(node, strings.NewReader(input), "fence_redfish"); err != nil {
			c.t.Fatalf("%s: the fencing job's check of %s's credential failed: %v\n%s", node, target, err, out)
		}
		// Past pcs's own wait, so that a wait that runs out is pcs's to report, with the cluster's
		// state, not a kill's.
		args := append(append([]string{"pcs", "stonith", verb, id, "fence_redfish"}, options...), "--wait=120")
		if out, err := c.runWithin(node, 3*time.Minute, nil, args...); err != nil || !strings.Contains(out, "is running") {
			c.t.Fatalf("%s: pcs stonith %s %s: %v\n%s", node, verb, id, err, out)
		}
		changed = append(changed, "pcs stonith "+verb+" "+id)
	}
	for _, d := range config.Primitives {
		if !slices.Contains(wanted, d.ID) {
			if out, err := c.run(node, "pcs", "stonith", "delete", d.ID); err != nil {
				c.t.Fatalf("%s: pcs stonith delete %s: %v\n%s", node, d.ID, err, out)
			}
			changed = append(changed, "pcs stonith delete "+d.ID)
		}
	}
	c.t.Logf("the fencing job on %s: %v", node, changed)
	return changed
}

// rerunUpdateSetup runs on node the start of the operator's update-setup job (4.22 and later,
// RunTnfUpdateSetup), which each node event (two Ready nodes again) and each start of the
// operator run on both nodes: with the cluster running and no node Offline in `pcs status nodes
// corosync`, it ends there. An Offline node (a replaced one) fails the test: the stand-in does
// not remove and re-add nodes.
func (c *cluster) rerunUpdateSetup(node string) {
	c.t.Helper()
	if out, err := c.run(node, "pcs", "cluster", "status"); err != nil {
		c.t.Fatalf("%s: pcs cluster status: %v\n%s", node, err, out)
	}
	out, err := c.run(node, "pcs", "status", "nodes", "corosync")
	if err != nil {
		c.t.Fatalf("%s: pcs status nodes corosync: %v\n%s", node, err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Offline:" {
			c.t.Fatalf("%s: update-setup finds %s Offline: the stand-in does not remove and re-add a node\n%s", node, f[1], out)
		}
	}
}
