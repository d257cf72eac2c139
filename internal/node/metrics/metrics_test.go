package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencedrill"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/golden"
)

func TestEtcdAgentRole(t *testing.T) {
	for _, tc := range []struct {
		role, decision, want string
	}{
		{"Promoted", "", RoleVoter},
		{"Promoted", "stale", RoleVoter},
		{"Unpromoted", "", RoleLearner},
		{"Unpromoted", "waiting for the peer", RoleReady},
		{"Stopped", "", RoleStopped},
		{"Stopped", "refuse: older data", RoleStopped},
		{"", "", RoleStopped},
	} {
		if got := etcdAgentRole(tc.role, tc.decision); got != tc.want {
			t.Errorf("etcdAgentRole(%q, %q) = %q, want %q", tc.role, tc.decision, got, tc.want)
		}
	}
}

// render serves r's metrics through a registry, in the text format Prometheus scrapes.
func render(t *testing.T, r Reading) string {
	t.Helper()
	text, err := Collector{Read: func(context.Context) Reading { return r }}.Text()
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// TestSurvivorAlone: node1 after it fenced node2 (a failed attempt first), serving alone; the
// peer's last published layer version; a clone's two stopped instances are one series; node1's
// fencing proven by a drill, node2's by the fencing in the history.
func TestSurvivorAlone(t *testing.T) {
	r := Reading{
		Node: "node1", Layer: "4.19.7-2", Release: "4.19.7", ReadSeconds: 0.25,
		Setup:            Setup{State: nodesetup.StateDone},
		CredentialIssued: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), CredentialExpires: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
		Corosync: &pcmk.Membership{Nodes: map[string]bool{"node1": true, "node2": false}, Quorate: true,
			Votes:   map[string]int{"Expected votes": 2, "Highest expected": 2, "Total votes": 1, "Quorum": 1},
			Members: []pcmk.Member{{ID: "1", Name: "node1", Votes: 1, Local: true}}},
		Links: []pcmk.Link{{ID: "0", Address: "192.168.77.1", Faulty: true}},
		Etcd:  &EtcdMembers{Voters: 1},
		Pacemaker: &pcmk.Status{DC: "node1", WithQuorum: true, StonithEnabled: true,
			Nodes: []pcmk.NodeStatus{
				{Name: "node1", Online: true, Type: "member", ExpectedUp: true, IsDC: true, Attributes: map[string]string{
					etcdnode.AttrLayerVersion: "4.19.7-2",
					etcdnode.AttrForced:       etcdnode.FormatTally(etcdnode.Tally{Count: 1, Last: time.Date(2026, 11, 24, 19, 20, 7, 0, time.UTC)})}},
				{Name: "node2", Type: "member", Attributes: map[string]string{etcdnode.AttrLayerVersion: "4.19.7-1"}},
			},
			Resources: []pcmk.ResourceRole{
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Promoted", Node: "node1", Clone: "etcd-clone", Active: true},
			},
			History: []pcmk.ResourceHistory{{Node: "node1", Resource: "etcd", MigrationThreshold: pcmk.FailCountInfinity}},
			Fencing: []pcmk.FenceEvent{
				{Action: "reboot", Target: "node2", Status: "success", Completed: "2026-11-24 19:20:05Z"},
				{Action: "reboot", Target: "node2", Status: "failed", Completed: "2026-11-24 19:19:50Z"},
			},
		},
	}
	r.Configuration = &pcmk.Configuration{Properties: map[string]string{fencedrill.PropProven("node1"): "1793700000"}}
	r.Health = health.Assess(health.Observation{Corosync: r.Corosync, Pacemaker: r.Pacemaker, SetupState: r.Setup.State})
	if r.Health.State != health.Degraded {
		t.Fatalf("the reading assesses as %s", r.Health.State)
	}
	golden.Check(t, "survivor-alone.txt", render(t, r))
}

// TestInertSetupFailed: an inert node whose setup failed, with Pacemaker not answering, waiting
// alone with auto-unblock refused three times.
func TestInertSetupFailed(t *testing.T) {
	r := Reading{
		Node: "node2", Layer: "4.19.7-2",
		Setup:       Setup{State: nodesetup.StateFailed, Reason: "BMC check of node1: 401 Unauthorized"},
		Corosync:    &pcmk.Membership{Nodes: map[string]bool{"node1": false, "node2": true}, WaitingForAll: true},
		AloneSince:  time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC),
		AutoUnblock: map[string]int{"refused": 3},
	}
	r.Health = health.Assess(health.Observation{Corosync: r.Corosync, SetupState: r.Setup.State})
	golden.Check(t, "inert-setup-failed.txt", render(t, r))
}

// TestGuestLearner: a guest of the operator's configuration while node2's etcd rejoins as a
// learner: podman-etcd's started instances are a voter and a learner (its learner_node), never
// "not a voter" for lack of a promoted role; node1's fence device takes any BMC certificate.
func TestGuestLearner(t *testing.T) {
	r := Reading{
		Node: "node1", Layer: "4.19.7-2",
		Setup:    Setup{State: nodesetup.StateGuest, Reason: "corosync.conf names cluster \"TNF\""},
		Corosync: &pcmk.Membership{Nodes: map[string]bool{"node1": true, "node2": true}, Quorate: true},
		Pacemaker: &pcmk.Status{DC: "node1", WithQuorum: true, StonithEnabled: true,
			Nodes: []pcmk.NodeStatus{{Name: "node1", Online: true, Type: "member"}, {Name: "node2", Online: true, Type: "member"}},
			Resources: []pcmk.ResourceRole{
				{ID: "etcd", Agent: "ocf:heartbeat:podman-etcd", Role: "Started", Node: "node1", Clone: "etcd-clone", Active: true},
				{ID: "etcd", Agent: "ocf:heartbeat:podman-etcd", Role: "Started", Node: "node2", Clone: "etcd-clone", Active: true},
				{ID: "node1_redfish", Agent: "stonith:fence_redfish", Role: "Started", Node: "node2", Active: true},
			}},
		Configuration: &pcmk.Configuration{Properties: map[string]string{"learner_node": "node2"},
			FenceDevices: []pcmk.FenceDevice{{ID: "node1_redfish", Agent: "fence_redfish", Insecure: true}, {ID: "node2_redfish", Agent: "fence_redfish"}}},
	}
	r.Health = health.Assess(health.Observation{Corosync: r.Corosync, Pacemaker: r.Pacemaker, Configuration: r.Configuration,
		SetupState: r.Setup.State, SetupReason: r.Setup.Reason})
	if r.Health.State != health.Recovering {
		t.Fatalf("the reading assesses as %s", r.Health.State)
	}
	text := render(t, r)
	for _, want := range []string{`tnf_etcd_role{node="node1",role="voter"} 1`, `tnf_etcd_role{node="node2",role="learner"} 1`,
		`tnf_guest{node="node1"} 1`, `tnf_fence_device_unchecked{device="node1_redfish"} 1`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %s", want)
		}
	}
	golden.Check(t, "guest-learner.txt", text)
}

// TestForcedNotTheAgents: a forced-cluster count the agent did not write drops that node's two
// series and nothing else.
func TestForcedNotTheAgents(t *testing.T) {
	r := Reading{Node: "node1", Pacemaker: &pcmk.Status{Nodes: []pcmk.NodeStatus{
		{Name: "node1", Online: true, Attributes: map[string]string{etcdnode.AttrForced: "twice", etcdnode.AttrDecision: "wait: peer"}},
		{Name: "node2", Online: true, Attributes: map[string]string{etcdnode.AttrForced: "2 1764012007"}},
	}}}
	text := render(t, r)
	for _, want := range []string{`tnf_up{node="node1",source="pacemaker"} 1`, `tnf_etcd_decision_info{decision="wait",node="node1"} 1`,
		`tnf_etcd_forced_clusters_total{node="node2"} 2`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `tnf_etcd_forced_clusters_total{node="node1"}`) {
		t.Errorf("a forced count for node1 from %q:\n%s", "twice", text)
	}
}

// TestFailoverOffSeries: maintenance mode and a node in standby, each a tnf_failover_off series,
// and the state failover-off.
func TestFailoverOffSeries(t *testing.T) {
	r := Reading{Node: "node1", Corosync: &pcmk.Membership{Nodes: map[string]bool{"node1": true, "node2": true}, Quorate: true},
		Pacemaker: &pcmk.Status{StonithEnabled: true, MaintenanceMode: true, Nodes: []pcmk.NodeStatus{{Name: "node1", Online: true}, {Name: "node2", Online: true, Standby: true}}},
		Setup:     Setup{State: nodesetup.StateDone}}
	r.Health = health.Assess(health.Observation{Corosync: r.Corosync, Pacemaker: r.Pacemaker, SetupState: r.Setup.State})
	text := render(t, r)
	for _, want := range []string{`tnf_failover_off{cause="maintenance-mode",subject=""} 1`, `tnf_failover_off{cause="node-standby",subject="node2"} 1`,
		`tnf_health_state{node="node1",state="failover-off"} 1`, `tnf_health_state{node="node1",state="healthy"} 0`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %s in:\n%s", want, text)
		}
	}
}
