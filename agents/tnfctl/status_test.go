package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencewait"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/golden"
)

// statusNow is when the views are rendered: the fencing history's times are of 2026-11-22.
var statusNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestStatusText: the one-screen view, led by its state and what to do, for the states an admin
// meets — both serving, a rolling update half done (each node's layer version; etcd 3.5 beside
// 3.6, below the patch level etcd asks for), a survivor alone
// after fencing its peer, a fencing that fails, a node that boots alone and waits, etcd refusing
// its data, a learner catching up, a setup that failed, Pacemaker not answering.
func TestStatusText(t *testing.T) {
	stack := func(node, role string) []pcmk.ResourceRole {
		return []pcmk.ResourceRole{
			{ID: "crio", Agent: "systemd:crio", Role: "Started", Node: node},
			{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: node},
			{ID: "etcd", Agent: "ocf:tnf:etcd", Role: role, Node: node},
		}
	}
	stopped := []pcmk.ResourceRole{
		{ID: "crio", Agent: "systemd:crio", Role: "Stopped"},
		{ID: "kubelet", Agent: "systemd:kubelet", Role: "Stopped"},
		{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped"},
	}
	unmanaged := func(rs []pcmk.ResourceRole) []pcmk.ResourceRole {
		for i := range rs {
			rs[i].Unmanaged = true
		}
		return rs
	}
	// n reboots of master-1 by master-0, one a day, newest first.
	fencing := func(n int) []pcmk.FenceEvent {
		var events []pcmk.FenceEvent
		for i := range n {
			events = append(events, pcmk.FenceEvent{Action: "reboot", Target: "master-1", Delegate: "master-0", Status: "success",
				Completed: fmt.Sprintf("2026-11-%02d 10:04:31 +01:00", 22-i)})
		}
		return events
	}
	for _, tc := range []struct {
		name  string
		state health.State
		st    clusterStatus
	}{
		{"both-serving", health.Healthy, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Promoted")...)},
		}},
		{"rolling-update", health.Healthy, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true, Attributes: map[string]string{etcdnode.AttrLayerVersion: "4.19.7-2"}},
					{Name: "master-1", Online: true, Attributes: map[string]string{etcdnode.AttrLayerVersion: "4.19.7-1"}}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Promoted")...)},
		}},
		{"etcd-35-beside-36", health.Healthy, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{
					{Name: "master-0", Online: true, Attributes: map[string]string{etcdnode.AttrLayerVersion: "4.21.0-1", etcdnode.AttrEtcdVersion: "3.6.5"}},
					{Name: "master-1", Online: true, Attributes: map[string]string{etcdnode.AttrLayerVersion: "4.20.8-1", etcdnode.AttrEtcdVersion: "3.5.21"}}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Promoted")...)},
		}},
		{"survivor-alone", health.Degraded, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1"}},
				Resources: append(stack("master-0", "Promoted"), stopped...),
				Fencing:   fencing(7)},
		}},
		{"fencing-fails", health.Blocked, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Unclean: true}},
				Resources: append(stack("master-0", "Promoted"), stopped...),
				Fencing: []pcmk.FenceEvent{{Action: "reboot", Target: "master-1", Delegate: "master-0", Status: "failed",
					ExitReason: "Fencing operation timeout", Completed: "2026-11-22 14:03:40Z"}}},
			FencingFails: &fencingFails{BMC: "BMC 192.0.2.21 unreachable",
				Advice: fencewait.Failing{Target: "master-1", Since: time.Date(2026, 11, 22, 14, 2, 11, 0, time.UTC), Attempts: 2, Retrying: true}.
					Describe("BMC 192.0.2.21 unreachable")},
		}},
		{"fencing-not-done", health.Blocked, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Unclean: true}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Promoted")...)},
		}},
		{"waiting-for-peer", health.Inert, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, WaitingForAll: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0",
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Unclean: true}},
				Resources: stopped},
		}},
		// The layer's first setup has not applied the cluster configuration: no resources.
		{"installer-etcd", health.InstallerEtcd, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, WaitingForAll: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0",
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1"}}},
			Setup:            setupStatus{State: nodesetup.StateWaiting},
			InstallerKubelet: true,
		}},
		{"refusing-older-data", health.Blocked, clusterStatus{
			Self:     "master-1",
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": false, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-1", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0"}, {Name: "master-1", Online: true,
					Attributes: map[string]string{etcdnode.AttrDecision: "refuse: the local member left its cluster (graceful leave): its data never leads, it joins the peer"}}},
				Resources: append(stack("master-1", "Unpromoted"), stopped...)},
		}},
		{"etcd-too-old", health.Blocked, clusterStatus{
			Self:     "master-1",
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true,
					Attributes: map[string]string{etcdnode.AttrDecision: "refuse: peer master-0 serves a cluster of etcd version 3.6.0, which this node's etcd 3.5.21 " +
						decision.EtcdTooOld + ": update this node's layer to a release with etcd 3.6 or later; nothing is moved aside meanwhile"}}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Unpromoted")...)},
		}},
		{"refusing-served-cluster", health.Blocked, clusterStatus{
			Self:     "master-0",
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{
					{Name: "master-0", Online: true, Attributes: map[string]string{etcdnode.AttrDecision: "refuse: " + decision.ServedWithoutData +
						" 5e1c0a7b9d2f4e61: never create an empty one in its place (did a data disk not mount?); bring its data back, or give it up with tnfctl start-empty --give-up 5e1c0a7b9d2f4e61"}},
					{Name: "master-1", Online: true, Attributes: map[string]string{etcdnode.AttrDecision: "wait: neither node has data; master-0 bootstraps the cluster (first by name)"}}},
				Resources: append(stack("master-0", "Unpromoted"), stack("master-1", "Unpromoted")...)},
		}},
		{"peer-contract-unreadable", health.Blocked, clusterStatus{
			Self:     "master-1",
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": false, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-1", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0"}, {Name: "master-1", Online: true,
					Attributes: map[string]string{etcdnode.AttrDecision: "wait: " + contract.Unreadable("master-0", contract.Version+2)}}},
				Resources: append(stack("master-1", "Unpromoted"), stopped...)},
		}},
		{"setup-failed", health.SetupFailed, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": false}, WaitingForAll: true},
			Error:    "crm_mon: exit status 102: Error: cluster is not available on this node",
			Setup: setupStatus{State: "failed",
				Reason: "checking the BMC credentials: master-1 (https://192.0.2.21): the BMC rejects the credentials (HTTP 401)"},
		}},
		{"learner-catching-up", health.Recovering, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true,
					Attributes: map[string]string{etcdnode.AttrCopiesDropped: etcdnode.FormatTally(etcdnode.Tally{Count: 1, Last: time.Date(2026, 11, 22, 10, 14, 2, 0, time.UTC)})}}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Unpromoted")...)},
		}},
		{"handover", health.Recovering, clusterStatus{
			Self:     "master-1",
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true,
					Attributes: map[string]string{etcdnode.AttrDecision: "wait: the installer's etcd (the static pod's etcd container, or an etcd this agent did not launch holding its ports) runs on this node: nothing starts here until the handover takes it out (tnfctl handover)"}}},
				Resources: append(stack("master-0", "Promoted"), stack("master-1", "Unpromoted")...)},
			Handover: &handover.State{Step: handover.StepInstaller, Since: time.Date(2026, 11, 22, 10, 15, 2, 0, time.UTC),
				Waiting: "the operator has not rolled out the static pod without etcd on this node yet"},
		}},
		{"pacemaker-down", health.PacemakerDown, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Error:    "crm_mon: exit status 102: Error: cluster is not available on this node",
		}},
		{"corosync-down", health.CorosyncDown, clusterStatus{
			CorosyncError: "corosync-cmapctl -b nodelist.node.: exit 1: Failed to initialize the cmap API. Error CS_ERR_LIBRARY",
		}},
		// What an administrator leaves behind after maintenance.
		{"maintenance-mode", health.FailoverOff, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, MaintenanceMode: true, DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true}},
				Resources: unmanaged(append(stack("master-0", "Promoted"), stack("master-1", "Promoted")...))},
		}},
		{"standby-fencing-disabled", health.FailoverOff, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{DC: "master-0", WithQuorum: true,
				Nodes:     []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true, Standby: true}},
				Resources: append(stack("master-0", "Promoted"), stopped...)},
		}},
		{"etcd-disabled", health.FailoverOff, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true}},
				Resources: []pcmk.ResourceRole{{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone", TargetRole: "Stopped"},
					{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone", TargetRole: "Stopped"}}},
		}},
		// A guest of the operator's configuration (DualReplica): node2's etcd rejoins as a
		// learner after a fencing, and master-0's device takes any BMC certificate.
		{"guest-learner", health.Recovering, clusterStatus{
			Corosync: pcmk.Membership{Nodes: map[string]bool{"master-0": true, "master-1": true}, Quorate: true},
			Pacemaker: &pcmk.Status{StonithEnabled: true, DC: "master-0", WithQuorum: true,
				Nodes: []pcmk.NodeStatus{{Name: "master-0", Online: true}, {Name: "master-1", Online: true}},
				Resources: []pcmk.ResourceRole{
					{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: "master-0"},
					{ID: "etcd", Agent: health.OperatorEtcdAgent, Role: "Started", Node: "master-0"},
					{ID: "master-1_redfish", Agent: "stonith:fence_redfish", Role: "Started", Node: "master-0"},
					{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: "master-1"},
					{ID: "etcd", Agent: health.OperatorEtcdAgent, Role: "Started", Node: "master-1"},
					{ID: "master-0_redfish", Agent: "stonith:fence_redfish", Role: "Started", Node: "master-1"}},
				Fencing: fencing(1)},
			Configuration: &pcmk.Configuration{Properties: map[string]string{health.PropLearnerNode: "master-1"},
				FenceDevices: []pcmk.FenceDevice{{ID: "master-0_redfish", Agent: "fence_redfish", Insecure: true}, {ID: "master-1_redfish", Agent: "fence_redfish"}}},
			Setup: setupStatus{State: nodesetup.StateGuest, Reason: `/etc/corosync/corosync.conf names cluster "TNF", which the cluster-etcd-operator's two-node jobs set up (a DualReplica cluster)`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.st.Self == "" {
				tc.st.Self = "master-0"
			}
			tc.st.assess(statusNow)
			if tc.st.State != tc.state {
				t.Errorf("state %q, want %q", tc.st.State, tc.state)
			}
			var out bytes.Buffer
			printStatus(&out, tc.st)
			golden.Check(t, "status-"+tc.name+".txt", out.String())
		})
	}
}

// TestOperatePageViews: each status view docs/operate.md shows is the rendering above, so the
// page shows what tnfctl prints.
func TestOperatePageViews(t *testing.T) {
	page, err := os.ReadFile("../../docs/operate.md")
	if err != nil {
		t.Fatal(err)
	}
	views := strings.Split(string(page), "<!-- status: ")[1:]
	if len(views) == 0 {
		t.Fatal("docs/operate.md shows no status view (<!-- status: NAME --> before a text block)")
	}
	for _, v := range views {
		name, rest, _ := strings.Cut(v, " -->\n```text\n")
		shown, _, ok := strings.Cut(rest, "```")
		want, err := os.ReadFile(filepath.Join("testdata", "status-"+name+".txt"))
		if !ok || err != nil {
			t.Errorf("docs/operate.md: view %q: no rendering or no text block (%v)", name, err)
			continue
		}
		if shown != string(want) {
			t.Errorf("docs/operate.md: view %q differs from testdata/status-%s.txt:\n%s", name, name, want)
		}
	}
}

// TestEtcdUpgradeWarning: only a 3.5 member below etcdBefore36 beside one of 3.6 or later is
// named, whatever the spelling of the versions; unknown versions are no warning.
func TestEtcdUpgradeWarning(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		warns bool
	}{
		{"3.5.21", "3.6.5", true},
		{"v3.5.21", "3.6.5", true},
		{"3.5.25", "3.6.0", true},
		{"3.5.21", "3.7.0", true},
		{"3.5.21", "3.6", true},
		{"3.5.26", "3.6.5", false},
		{"3.5.30", "3.6.5", false},
		{"3.5.21", "3.5.26", false},
		{"3.6.5", "3.6.0", false},
		{"3.5.21", "", false},
		{"", "3.6.5", false},
		{"3.5.21", "not-a-version", false},
	} {
		nodes := []pcmk.NodeStatus{
			{Name: "master-0", Attributes: map[string]string{etcdnode.AttrEtcdVersion: tc.a}},
			{Name: "master-1", Attributes: map[string]string{etcdnode.AttrEtcdVersion: tc.b}},
		}
		got := etcdUpgradeWarning(nodes)
		if (got != "") != tc.warns || tc.warns && !strings.Contains(got, "on master-0") {
			t.Errorf("%q beside %q: %q, want a warning naming master-0: %v", tc.a, tc.b, got, tc.warns)
		}
	}
}
