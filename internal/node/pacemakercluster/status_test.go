package pacemakercluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

// serving is both nodes online, kubelet started and etcd promoted on each, each node's two fence
// devices running: the healthy baseline each case changes.
func serving() Input {
	in := Input{
		Nodes: []Node{{Name: "master-0", IP: "10.0.0.10"}, {Name: "master-1", IP: "10.0.0.11"}},
		Pacemaker: pcmk.Status{DC: "master-0", WithQuorum: true, StonithEnabled: true,
			Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true, Type: "member"}, {Name: "master-1", Online: true, Type: "member"}}},
	}
	for i, n := range []string{"master-0", "master-1"} {
		in.Pacemaker.Resources = append(in.Pacemaker.Resources,
			pcmk.ResourceRole{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: n, Clone: "kubelet-clone", Active: true},
			pcmk.ResourceRole{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Promoted", Node: n, Clone: "etcd-clone", Active: true},
			pcmk.ResourceRole{ID: "fence-" + n, Agent: "stonith:fence_tnf_redfish", Role: "Started", Node: []string{"master-1", "master-0"}[i], Active: true},
			pcmk.ResourceRole{ID: "fence-" + n + "-poweroff", Agent: "stonith:fence_tnf_poweroff", Role: "Started", Node: []string{"master-1", "master-0"}[i], Active: true})
		in.Configuration.FenceDevices = append(in.Configuration.FenceDevices,
			pcmk.FenceDevice{ID: "fence-" + n, Agent: "fence_tnf_redfish", Targets: []string{n}},
			pcmk.FenceDevice{ID: "fence-" + n + "-poweroff", Agent: "fence_tnf_poweroff", Targets: []string{n}})
	}
	return in
}

func with(change func(*Input)) Input {
	in := serving()
	change(&in)
	return in
}

// resource finds agent's instance on node, or fence device id's resource.
func resource(in *Input, agent, node string) *pcmk.ResourceRole {
	for i, r := range in.Pacemaker.Resources {
		if (r.Agent == agent && r.Node == node) || r.ID == agent {
			return &in.Pacemaker.Resources[i]
		}
	}
	panic(agent + " on " + node)
}

// powerCut is master-1 lost and fenced: offline, its etcd and kubelet instances stopped, the
// devices it ran moved to master-0.
func powerCut(in *Input) {
	in.Pacemaker.Nodes[1].Online = false
	in.Pacemaker.Resources = slices.DeleteFunc(in.Pacemaker.Resources, func(r pcmk.ResourceRole) bool {
		return r.Node == "master-1" && !strings.HasPrefix(r.Agent, "stonith:")
	})
	for i := range in.Pacemaker.Resources {
		in.Pacemaker.Resources[i].Node = "master-0"
	}
	in.Pacemaker.Resources = append(in.Pacemaker.Resources, pcmk.ResourceRole{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"})
}

// conditionsAt are the conditions at path: "" the cluster's, "node", "node/Kubelet" or
// "node/Etcd", or "node/fence:ID" (nil: no such place).
func conditionsAt(st Status, path string) []metav1.Condition {
	if path == "" {
		return st.Conditions
	}
	node, sub, _ := strings.Cut(path, "/")
	n := nodeOf(&st, node)
	switch dev, fence := strings.CutPrefix(sub, "fence:"); {
	case n == nil:
		return nil
	case fence:
		for _, a := range n.FencingAgents {
			if a.Name == dev {
				return a.Conditions
			}
		}
		return nil
	case sub != "":
		for _, r := range n.Resources {
			if r.Name == sub {
				return r.Conditions
			}
		}
		return nil
	}
	return n.Conditions
}

// cond is the status and reason of condition typ at path (conditionsAt).
func cond(st Status, path, typ string) string {
	c := meta.FindStatusCondition(conditionsAt(st, path), typ)
	if c == nil {
		return "missing"
	}
	return string(c.Status) + " " + c.Reason
}

func TestBuild(t *testing.T) {
	v, err := crdvalidate.Load("crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   Input
		// want: path and condition → "Status Reason"
		want map[string]string
		// message: a word the cluster's Healthy message must hold
		message string
	}{
		{"healthy", serving(), map[string]string{"|Healthy": "True ClusterHealthy", "|InService": "True InService", "|NodeCountAsExpected": "True AsExpected",
			"master-1|Healthy": "True NodeHealthy", "master-1/Etcd|Healthy": "True ResourceHealthy", "master-1|FencingAvailable": "True FencingAvailable",
			"master-1|FencingHealthy": "True FencingHealthy", "master-0/fence:fence-master-0|Healthy": "True ResourceHealthy"}, ""},
		{"power cut", with(powerCut), map[string]string{"|Healthy": "False ClusterUnhealthy", "master-1|Online": "False Offline",
			"master-1|Healthy": "False NodeUnhealthy", "master-1/Etcd|Started": "False Stopped", "master-1/Kubelet|Active": "False Inactive",
			"master-0|Healthy": "True NodeHealthy", "master-1|FencingAvailable": "True FencingAvailable", "master-1/Etcd|Managed": "True Managed"}, "offline"},
		{"unclean, not yet fenced", with(func(in *Input) { powerCut(in); in.Pacemaker.Nodes[1].Unclean = true }),
			map[string]string{"master-1|Clean": "False Unclean"}, "unclean"},
		{"maintenance mode", with(func(in *Input) { in.Pacemaker.MaintenanceMode = true }), map[string]string{
			"|Healthy": "False ClusterUnhealthy", "|InService": "False InMaintenance", "master-0|InService": "True InService",
			"master-0/Etcd|InService": "False InMaintenance", "master-0/Etcd|Healthy": "True ResourceHealthy"}, "maintenance"},
		{"fencing disabled", with(func(in *Input) { in.Pacemaker.StonithEnabled = false }), map[string]string{"|Healthy": "False ClusterUnhealthy",
			"master-0|Healthy": "True NodeHealthy"}, "stonith-enabled=false"},
		{"node in standby", with(func(in *Input) { in.Pacemaker.Nodes[1].Standby = true }), map[string]string{"master-1|Active": "False Standby",
			"master-1|Healthy": "False NodeUnhealthy", "|Healthy": "False ClusterUnhealthy"}, "standby"},
		{"a joining node is no one's standby", with(func(in *Input) { in.Pacemaker.Nodes[1].Standby, in.Pacemaker.Nodes[1].Pending = true, true }),
			map[string]string{"master-1|Active": "True Active", "master-1|Ready": "False Pending"}, "joining"},
		{"node in maintenance", with(func(in *Input) { in.Pacemaker.Nodes[0].Maintenance = true }), map[string]string{"master-0|InService": "False InMaintenance",
			"master-0/Kubelet|InService": "False InMaintenance", "|InService": "True InService"}, "maintenance"},
		{"etcd a learner", with(func(in *Input) { resource(in, "ocf:tnf:etcd", "master-1").Role = "Unpromoted" }), map[string]string{
			"master-1/Etcd|Started": "True Started", "master-1/Etcd|Healthy": "False ResourceUnhealthy", "master-1|Healthy": "False NodeUnhealthy"}, "learner"},
		{"etcd disabled", with(func(in *Input) {
			for i := range in.Pacemaker.Resources {
				if in.Pacemaker.Resources[i].Agent == "ocf:tnf:etcd" {
					in.Pacemaker.Resources[i].TargetRole = "Stopped"
				}
			}
		}), map[string]string{"master-0/Etcd|Enabled": "False Disabled", "master-0/Etcd|Healthy": "False ResourceUnhealthy"}, "disabled"},
		{"kubelet unmanaged and failed", with(func(in *Input) {
			r := resource(in, "systemd:kubelet", "master-0")
			r.Unmanaged, r.Failed = true, true
		}), map[string]string{"master-0/Kubelet|Managed": "False Unmanaged", "master-0/Kubelet|Operational": "False Failed", "master-1/Kubelet|Managed": "True Managed"}, "(pcs resource manage kubelet-clone)"},
		{"a fence device stopped", with(func(in *Input) {
			r := resource(in, "fence-master-1", "")
			r.Role, r.Active, r.Node = "Stopped", false, ""
		}),
			map[string]string{"master-1|FencingAvailable": "True FencingAvailable", "master-1|FencingHealthy": "False FencingUnhealthy",
				"master-1/fence:fence-master-1|Started": "False Stopped", "master-1|Healthy": "True NodeHealthy"}, ""},
		{"a fence device disabled", with(func(in *Input) { resource(in, "fence-master-1", "").TargetRole = "Stopped" }),
			map[string]string{"master-1/fence:fence-master-1|Enabled": "False Disabled"}, "fence-master-1 is disabled"},
		{"no fence device", with(func(in *Input) { in.Configuration.FenceDevices = in.Configuration.FenceDevices[:2] }),
			map[string]string{"master-1|FencingAvailable": "False FencingUnavailable", "master-1|Healthy": "False NodeUnhealthy"}, "proven off"},
		{"a node Pacemaker does not list", with(func(in *Input) { in.Pacemaker.Nodes = in.Pacemaker.Nodes[:1] }),
			map[string]string{"|NodeCountAsExpected": "False InsufficientNodes", "master-1|Member": "False NotMember"}, "expected 2 nodes"},
		{"a third node", with(func(in *Input) {
			in.Pacemaker.Nodes = append(in.Pacemaker.Nodes, pcmk.NodeStatus{Name: "master-2", Online: true})
		}), map[string]string{"|NodeCountAsExpected": "False ExcessiveNodes"}, "has 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Build(tc.in, nil, t0)
			for k, want := range tc.want {
				path, typ, _ := strings.Cut(k, "|")
				if got := cond(st, path, typ); got != want {
					t.Errorf("%s %s: %s, want %s", path, typ, got, want)
				}
			}
			if msg := meta.FindStatusCondition(st.Conditions, Healthy).Message; !strings.Contains(msg, tc.message) {
				t.Errorf("Healthy's message %q lacks %q", msg, tc.message)
			}
			obj := PacemakerCluster{TypeMeta: metav1.TypeMeta{APIVersion: Resource.GroupVersion().String(), Kind: Kind},
				ObjectMeta: metav1.ObjectMeta{Name: Name}, Status: st}
			if err := v.Validate(obj); err != nil {
				data, _ := json.MarshalIndent(obj, "", " ")
				t.Errorf("%v\n%s", err, data)
			}
		})
	}
}

// A condition keeps the time it last changed; lastUpdated never goes back.
func TestBuildCarriesTransitions(t *testing.T) {
	first := Build(serving(), nil, t0)
	later := t0.Add(time.Minute)
	second := Build(with(powerCut), &first, later)
	for _, tc := range []struct {
		path, typ string
		at        time.Time
	}{{"", InService, t0}, {"", Healthy, later}, {"master-1", Online, later}, {"master-1", Member, t0}, {"master-1/Etcd", Started, later},
		{"master-1/Etcd", Managed, t0}, {"master-1/fence:fence-master-1", Started, t0}} {
		c := meta.FindStatusCondition(conditionsAt(second, tc.path), tc.typ)
		if c == nil {
			t.Fatalf("%s %s: missing", tc.path, tc.typ)
		}
		if got := c.LastTransitionTime.Time; !got.Equal(tc.at) {
			t.Errorf("%s %s changed at %s, want %s", tc.path, tc.typ, got, tc.at)
		}
	}
	if back := Build(serving(), &second, t0); !back.LastUpdated.Equal(&second.LastUpdated) {
		t.Errorf("a clock behind the last publisher's: lastUpdated %s, want %s", back.LastUpdated, second.LastUpdated)
	}
}

// The CRD refuses what the field's refuses: a sample of its rules.
func TestCRDRefuses(t *testing.T) {
	v, err := crdvalidate.Load("crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*PacemakerCluster)
		want   string
	}{
		{"another name", func(p *PacemakerCluster) { p.Name = "other" }, "must be named 'cluster'"},
		{"a cluster condition missing", func(p *PacemakerCluster) {
			p.Status.Conditions = append(p.Status.Conditions[:1:1], p.Status.Conditions[2:]...)
		}, "InService"},
		{"a node without Etcd", func(p *PacemakerCluster) { (*p.Status.Nodes)[0].Resources = (*p.Status.Nodes)[0].Resources[:1] }, "a resource named Etcd"},
		{"a loopback address", func(p *PacemakerCluster) { (*p.Status.Nodes)[0].Addresses[0].Address = "127.0.0.1" }, "global unicast"},
		{"an unknown method", func(p *PacemakerCluster) { (*p.Status.Nodes)[0].FencingAgents[0].Method = "SSH" }, "Unsupported value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PacemakerCluster{TypeMeta: metav1.TypeMeta{APIVersion: Resource.GroupVersion().String(), Kind: Kind},
				ObjectMeta: metav1.ObjectMeta{Name: Name}, Status: Build(serving(), nil, t0)}
			tc.change(&p)
			if err := v.Validate(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a refusal with %q", err, tc.want)
			}
		})
	}
}

func ExampleBuild() {
	st := Build(with(powerCut), nil, t0)
	fmt.Println(meta.FindStatusCondition(st.Conditions, Healthy).Message)
	// Output: master-1: the node is offline: not in Pacemaker's membership; Kubelet: Active: inactive; Started: role not running here; Etcd: Active: inactive; Started: role not running here
}
