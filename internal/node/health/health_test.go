package health

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// serving is both nodes members and serving, fencing on: the healthy baseline each case changes.
func serving() Observation {
	return Observation{
		Corosync: &pcmk.Membership{Nodes: map[string]bool{"n1": true, "n2": true}, Quorate: true},
		Pacemaker: &pcmk.Status{StonithEnabled: true, WithQuorum: true,
			Nodes: []pcmk.NodeStatus{{Name: "n1", Online: true}, {Name: "n2", Online: true}},
			Resources: []pcmk.ResourceRole{
				{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: "n1", Clone: "kubelet-clone"},
				{ID: "kubelet", Agent: "systemd:kubelet", Role: "Started", Node: "n2", Clone: "kubelet-clone"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Promoted", Node: "n1", Clone: "etcd-clone"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Promoted", Node: "n2", Clone: "etcd-clone"},
			}},
		SetupState: nodesetup.StateDone,
	}
}

// restoring is serving() while tnfctl restore on n1 is at step, etcd kept stopped by its
// target-role (the restore's own), then change.
func restoring(step string, change func(*Observation)) Observation {
	o := serving()
	for i, r := range o.Pacemaker.Resources {
		if r.ID == "etcd" {
			o.Pacemaker.Resources[i].Role, o.Pacemaker.Resources[i].Node, o.Pacemaker.Resources[i].TargetRole = "Stopped", "", "Stopped"
		}
	}
	r := etcdnode.Restore{Node: "n1", Snapshot: "0123456789abcdef", Cluster: "c1", Step: step, Waiting: "etcd runs: Promoted on n2"}
	data, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	o.Configuration = &pcmk.Configuration{Properties: map[string]string{etcdnode.PropRestore: string(data)}}
	if change != nil {
		change(&o)
	}
	return o
}

// guestServing is serving() on a cluster the operator configured: etcd through podman-etcd,
// whose instances are Started, and no claim of its agent.
func guestServing() Observation {
	o := serving()
	for i, r := range o.Pacemaker.Resources {
		if r.ID == "etcd" {
			o.Pacemaker.Resources[i].Agent, o.Pacemaker.Resources[i].Role = OperatorEtcdAgent, "Started"
		}
	}
	o.SetupState, o.SetupReason = nodesetup.StateGuest, "corosync.conf names cluster \"TNF\""
	o.Configuration = &pcmk.Configuration{Properties: map[string]string{"stonith-enabled": "true"}}
	return o
}

// TestAssess: every state, each from the reading that leads to it, with the cause and the next
// step in its line; what outranks what; and every setting that turns failover off, listed once
// with the command that undoes it.
func TestAssess(t *testing.T) {
	with := func(change func(*Observation)) Observation {
		o := serving()
		change(&o)
		return o
	}
	guest := func(change func(*Observation)) Observation {
		o := guestServing()
		change(&o)
		return o
	}
	n2Gone := func(o *Observation) {
		o.Corosync.Nodes["n2"] = false
		o.Pacemaker.Nodes[1].Online = false
		o.Pacemaker.Resources = slices.DeleteFunc(o.Pacemaker.Resources, func(r pcmk.ResourceRole) bool { return r.Node == "n2" })
	}
	for _, tc := range []struct {
		name  string
		o     Observation
		state State
		line  []string // in the line, in order
		off   []string // the causes' kinds
	}{
		{"both serving", serving(), Healthy, []string{"HEALTHY"}, nil},
		{"alone after a fencing", with(n2Gone), Degraded, []string{"DEGRADED: n1 serves alone; n2 is away"}, nil},
		{"a learner catching up", with(func(o *Observation) { o.Pacemaker.Resources[3].Role = "Unpromoted" }), Recovering,
			[]string{"RECOVERING: etcd serves on 1 of 2 members", "Look again in a minute"}, nil},
		{"the handover", with(func(o *Observation) {
			o.Pacemaker.Resources[3].Role = "Unpromoted"
			o.Handover = &handover.State{Step: handover.StepInstaller}
		}), Recovering, []string{"handed over", string(handover.StepInstaller)}, nil},
		{"inert", with(func(o *Observation) {
			n2Gone(o)
			o.Corosync.Quorate, o.Corosync.WaitingForAll = false, true
		}), Inert, []string{"INERT: waits for n2", "tnfctl confirm-peer-down"}, nil},
		{"the installer's etcd", with(func(o *Observation) {
			n2Gone(o)
			o.Corosync.Quorate, o.Corosync.WaitingForAll, o.InstallerKubelet = false, true, true
		}), InstallerEtcd, []string{"INSTALLER'S ETCD", "Do not confirm n2 down"}, nil},
		// The peer has joined, setup is done, the handover has not started: the installer's etcd
		// serves, nothing recovers.
		{"the installer's etcd before the handover", with(func(o *Observation) {
			o.InstallerKubelet = true
			o.Pacemaker.Resources[2].Role, o.Pacemaker.Resources[3].Role = "Unpromoted", "Unpromoted"
		}), InstallerEtcd, []string{"INSTALLER'S ETCD: cri-o and kubelet run the installer's etcd here", "tnf-handover.service"}, nil},
		{"fencing fails", with(func(o *Observation) { n2Gone(o); o.FencingFails = true }), Blocked,
			[]string{"BLOCKED: the fencing of n2 fails", "tnfctl confirm-peer-down"}, nil},
		{"not fenced yet", with(func(o *Observation) { n2Gone(o); o.Pacemaker.Nodes[1].Unclean = true }), Blocked,
			[]string{"BLOCKED: n2 is not fenced yet"}, nil},
		{"refusing its data", with(func(o *Observation) {
			o.Pacemaker.Nodes[0].Attributes = map[string]string{etcdnode.AttrDecision: "refuse: older data"}
		}), Blocked, []string{"BLOCKED: etcd on n1 refuses its data", "tnfctl accept-data-loss"}, nil},
		{"setup failed", with(func(o *Observation) { o.SetupState = nodesetup.StateFailed }), SetupFailed, []string{"SETUP FAILED", "tnfctl setup"}, nil},
		// A run after a completed one failed (a password applied by hand while the peer is away):
		// the node was set up and serves, and says so.
		{"a later setup failed, serving alone", with(func(o *Observation) { n2Gone(o); o.SetupState, o.SetUpBefore = nodesetup.StateFailed, true }),
			Degraded, []string{"DEGRADED: n1 serves alone"}, nil},
		{"setup failed, Corosync down", with(func(o *Observation) { o.SetupState, o.Corosync, o.Pacemaker = nodesetup.StateFailed, nil, nil }),
			SetupFailed, []string{"SETUP FAILED"}, nil},
		{"Corosync down", with(func(o *Observation) { o.Corosync, o.Pacemaker = nil, nil }), CorosyncDown,
			[]string{"COROSYNC NOT ANSWERING", "systemctl status corosync"}, nil},
		{"Pacemaker down", with(func(o *Observation) { o.Pacemaker = nil }), PacemakerDown, []string{"PACEMAKER NOT ANSWERING"}, nil},

		// What an administrator leaves behind after maintenance reads as such, never as healthy
		// or as recovering.
		{"maintenance mode", with(func(o *Observation) {
			o.Pacemaker.MaintenanceMode = true
			for i := range o.Pacemaker.Resources {
				o.Pacemaker.Resources[i].Unmanaged = true // crm_mon marks every resource so
			}
		}), FailoverOff, []string{"NO FAILOVER: Pacemaker is in maintenance mode", "`pcs property set maintenance-mode=false`"}, []string{CauseMaintenanceMode}},
		{"fencing disabled", with(func(o *Observation) { o.Pacemaker.StonithEnabled = false }), FailoverOff,
			[]string{"NO FAILOVER: fencing is disabled", "`pcs property set stonith-enabled=true`"}, []string{CauseFencingDisabled}},
		{"a node in standby", with(func(o *Observation) {
			o.Pacemaker.Nodes[1].Standby = true
			o.Pacemaker.Resources = slices.DeleteFunc(o.Pacemaker.Resources, func(r pcmk.ResourceRole) bool { return r.Node == "n2" })
		}), FailoverOff, []string{"NO FAILOVER: n2 is in standby", "`pcs node unstandby n2`"}, []string{CauseNodeStandby}},
		{"a node still joining, which Pacemaker shows in standby", with(func(o *Observation) {
			o.Pacemaker.Nodes[1].Pending, o.Pacemaker.Nodes[1].Standby = true, true
			o.Pacemaker.Resources = slices.DeleteFunc(o.Pacemaker.Resources, func(r pcmk.ResourceRole) bool { return r.Node == "n2" })
		}), Recovering, []string{"RECOVERING"}, nil},
		{"a node in maintenance", with(func(o *Observation) {
			o.Pacemaker.Nodes[1].Maintenance = true
			o.Pacemaker.Resources[1].Unmanaged, o.Pacemaker.Resources[3].Unmanaged = true, true
		}), FailoverOff, []string{"NO FAILOVER: n2 is in maintenance", "`pcs node unmaintenance n2`"}, []string{CauseNodeMaintenance}},
		{"etcd unmanaged", with(func(o *Observation) {
			o.Pacemaker.Resources[2].Unmanaged, o.Pacemaker.Resources[3].Unmanaged = true, true
		}),
			FailoverOff, []string{"NO FAILOVER: etcd-clone is unmanaged", "`pcs resource manage etcd-clone`"}, []string{CauseUnmanaged}},
		{"kubelet disabled", with(func(o *Observation) {
			o.Pacemaker.Resources = []pcmk.ResourceRole{
				{ID: "kubelet", Agent: "systemd:kubelet", Role: "Stopped", Clone: "kubelet-clone", TargetRole: "Stopped"},
				{ID: "kubelet", Agent: "systemd:kubelet", Role: "Stopped", Clone: "kubelet-clone", TargetRole: "Stopped"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"},
				{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"}}
		}), FailoverOff, []string{"NO FAILOVER: kubelet-clone is disabled", "`pcs resource enable kubelet-clone`"}, []string{CauseDisabled}},
		{"a fence device disabled", with(func(o *Observation) {
			o.Pacemaker.Resources = append(o.Pacemaker.Resources, pcmk.ResourceRole{ID: "fence-n2", Agent: "stonith:fence_tnf_redfish", Role: "Stopped", TargetRole: "Stopped"})
		}), FailoverOff, []string{"fence-n2 is disabled", "`pcs stonith enable fence-n2`"}, []string{CauseDisabled}},
		{"a fence device unmanaged", with(func(o *Observation) {
			o.Pacemaker.Resources = append(o.Pacemaker.Resources, pcmk.ResourceRole{ID: "fence-n2", Agent: "stonith:fence_tnf_redfish", Role: "Started", Node: "n1", Unmanaged: true})
		}), FailoverOff, []string{"fence-n2 is unmanaged", "`pcs stonith meta fence-n2 is-managed=true`"}, []string{CauseUnmanaged}},
		{"all of them at once, each listed", with(func(o *Observation) {
			o.Pacemaker.StonithEnabled = false
			o.Pacemaker.Nodes[1].Standby = true
			o.Pacemaker.Resources[2].TargetRole, o.Pacemaker.Resources[3].TargetRole = "Stopped", "Stopped"
		}), FailoverOff, []string{"NO FAILOVER: fencing is disabled", "`pcs property set stonith-enabled=true`, `pcs node unstandby n2`, `pcs resource enable etcd-clone`"},
			[]string{CauseFencingDisabled, CauseNodeStandby, CauseDisabled}},
		// A fault outranks the setting, which is still listed: the fault is what to act on first.
		{"alone, fencing disabled", with(func(o *Observation) {
			n2Gone(o)
			o.Pacemaker.StonithEnabled = false
			o.Pacemaker.Nodes[1].Unclean = true
		}),
			Blocked, []string{"BLOCKED: n2 is not fenced yet"}, []string{CauseFencingDisabled}},
		{"inert in maintenance mode", with(func(o *Observation) {
			n2Gone(o)
			o.Corosync.Quorate, o.Corosync.WaitingForAll, o.Pacemaker.MaintenanceMode = false, true, true
		}), Inert, []string{"INERT"}, []string{CauseMaintenanceMode}},

		// A restore from a snapshot (tnfctl restore): its own stop of etcd is no administrator's
		// setting, and the agents' refusals meanwhile (data of the cluster given up) are its.
		{"a restore stopping etcd", restoring(etcdnode.RestoreStopping, nil), Restoring,
			[]string{"RESTORING: `tnfctl restore` on n1 replaces etcd's data by snapshot 0123456789ab", "etcd is being stopped on both nodes",
				"waiting: etcd runs", "run it again on n1 with the same snapshot"}, nil},
		{"a restore beside the agents' refusals", restoring(etcdnode.RestoreStarting, func(o *Observation) {
			o.Pacemaker.Nodes[1].Attributes = map[string]string{etcdnode.AttrDecision: "refuse: local data belongs to cluster 1"}
		}), Restoring, []string{"RESTORING", "n1 serves the restored cluster, then its peer joins it"}, nil},
		{"a restore beside an administrator's setting", restoring(etcdnode.RestoreRestoring, func(o *Observation) {
			o.Pacemaker.Nodes[1].Standby = true
		}), Restoring, []string{"RESTORING", "the snapshot is being restored on n1"}, []string{CauseNodeStandby}},
		{"a restore that has ended", with(func(o *Observation) { o.Configuration = restoring(etcdnode.RestoreDone, nil).Configuration }),
			Healthy, []string{"HEALTHY"}, nil},
		{"a restore's record unreadable", with(func(o *Observation) {
			o.Configuration = &pcmk.Configuration{Properties: map[string]string{etcdnode.PropRestore: "{"}}
		}), Restoring, []string{"RESTORING, but its record cannot be read", etcdnode.PropRestore}, nil},
		{"a restore while Corosync is down", restoring(etcdnode.RestoreStopping, func(o *Observation) { o.Corosync, o.Pacemaker = nil, nil }),
			CorosyncDown, []string{"COROSYNC NOT ANSWERING"}, nil},

		// A guest: the operator's configuration, read in podman-etcd's terms, with Pacemaker's
		// own commands as advice.
		{"guest: both serving", guestServing(), Healthy, []string{"HEALTHY: both nodes serve; etcd has two voters"}, nil},
		{"guest: known from Pacemaker alone", guest(func(o *Observation) { o.SetupState, o.SetupReason = nodesetup.StateFailed, "a BMC check failed" }), Healthy, []string{"HEALTHY"}, nil},
		{"guest: alone after a fencing", guest(func(o *Observation) {
			n2Gone(o)
			o.Configuration.Properties[PropStandaloneNode] = "n1"
		}), Degraded, []string{"DEGRADED: n1 serves alone; n2 is away"}, nil},
		{"guest: forcing a new cluster", guest(func(o *Observation) {
			n2Gone(o)
			o.Pacemaker.Nodes[0].Attributes = map[string]string{AttrForceNewCluster: "n1"}
		}), Recovering, []string{"RECOVERING: etcd on n1 forces a new cluster (podman-etcd's force_new_cluster)"}, nil},
		{"guest: a learner catching up", guest(func(o *Observation) { o.Configuration.Properties[PropLearnerNode] = "n2" }), Recovering,
			[]string{"RECOVERING: etcd on n2 rejoins as a learner (podman-etcd's learner_node)"}, nil},
		// podman-etcd's "peer active but not a voter": both started, the peer not yet added.
		{"guest: standalone beside a started peer", guest(func(o *Observation) { o.Configuration.Properties[PropStandaloneNode] = "n1" }), Recovering,
			[]string{"RECOVERING: etcd on n1 serves as a cluster of one (podman-etcd's standalone_node)"}, nil},
		{"guest: etcd starting", guest(func(o *Observation) { o.Pacemaker.Resources[3].Role = "Stopped" }), Recovering,
			[]string{"RECOVERING: etcd serves on 1 of 2 nodes"}, nil},
		{"guest: the configuration unread", guest(func(o *Observation) { o.Configuration = nil }), Recovering, []string{"cannot be told"}, nil},
		{"guest: inert", guest(func(o *Observation) {
			n2Gone(o)
			o.Corosync.Quorate, o.Corosync.WaitingForAll = false, true
		}), Inert, []string{"INERT: waits for n2 to join; no kubelet or etcd here", "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs quorum unblock`)"}, nil},
		{"guest: fencing fails", guest(func(o *Observation) { n2Gone(o); o.FencingFails = true }), Blocked,
			[]string{"BLOCKED: the fencing of n2 fails", "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs stonith confirm n2`)"}, nil},
		{"guest: not fenced yet", guest(func(o *Observation) { n2Gone(o); o.Pacemaker.Nodes[1].Unclean = true }), Blocked,
			[]string{"BLOCKED: n2 is not fenced yet", "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs stonith confirm n2`)"}, nil},
		{"guest: maintenance mode", guest(func(o *Observation) { o.Pacemaker.MaintenanceMode = true }), FailoverOff,
			[]string{"NO FAILOVER: Pacemaker is in maintenance mode"}, []string{CauseMaintenanceMode}},
		{"guest: Corosync down", guest(func(o *Observation) { o.Corosync, o.Pacemaker = nil, nil }), CorosyncDown, []string{"COROSYNC NOT ANSWERING"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Assess(tc.o)
			if isGuest := strings.HasPrefix(tc.name, "guest:"); (a.Guest != "") != isGuest {
				t.Errorf("guest %q, want one: %v", a.Guest, isGuest)
			}
			if a.State != tc.state {
				t.Errorf("state %s, want %s (%s)", a.State, tc.state, a.Line)
			}
			rest := a.Line
			for _, want := range tc.line {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Errorf("line %q lacks %q (or not in order)", a.Line, want)
					break
				}
				rest = rest[i+len(want):]
			}
			var kinds []string
			for _, c := range a.FailoverOff {
				kinds = append(kinds, c.Kind)
			}
			if !reflect.DeepEqual(kinds, tc.off) {
				t.Errorf("failover off for %v, want %v", kinds, tc.off)
			}
		})
	}
}

// TestUncheckedBMCs: the fence devices that take any certificate from their BMC, and none when
// the configuration did not answer.
func TestUncheckedBMCs(t *testing.T) {
	o := guestServing()
	o.Configuration.FenceDevices = []pcmk.FenceDevice{{ID: "n1_redfish", Insecure: true}, {ID: "n2_redfish"}, {ID: "n2_ipmi", Insecure: true}}
	if got := o.UncheckedBMCs(); !reflect.DeepEqual(got, []string{"n1_redfish", "n2_ipmi"}) {
		t.Errorf("%v", got)
	}
	if got := serving().UncheckedBMCs(); got != nil {
		t.Errorf("without the configuration: %v", got)
	}
}

// TestEveryStateHasAnExitCode: the exit codes status's help documents, one per state.
func TestEveryStateHasAnExitCode(t *testing.T) {
	want := map[State]int{Healthy: 0, Degraded: 4, Recovering: 4, InstallerEtcd: 4, FailoverOff: 6, Restoring: 5,
		Inert: 5, Blocked: 5, SetupFailed: 5, PacemakerDown: 5, CorosyncDown: 5}
	if len(want) != len(States) {
		t.Fatalf("%d states, %d exit codes known to the test", len(States), len(want))
	}
	for _, s := range States {
		if got := s.ExitCode(); got != want[s] {
			t.Errorf("%s: exit %d, want %d", s, got, want[s])
		}
	}
}

// TestCauseKinds: every cause kind has its own text.
func TestCauseKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range CauseKinds {
		text := Cause{Kind: k, Subject: "x"}.String()
		if text == k || seen[text] {
			t.Errorf("%s: %q", k, text)
		}
		seen[text] = true
	}
	if got := fmt.Sprint(Cause{Kind: CauseDisabled, Subject: "etcd-clone"}); got != "etcd-clone is disabled: Pacemaker keeps it stopped" {
		t.Errorf("%q", got)
	}
}

// TestHandoverPending: etcd here is the installer's, or being handed over, until the handover is
// done.
func TestHandoverPending(t *testing.T) {
	for _, tc := range []struct {
		o    Observation
		want bool
	}{
		{Observation{}, false},
		{Observation{InstallerKubelet: true}, true},
		{Observation{Handover: &handover.State{Step: handover.StepInstaller}}, true},
	} {
		if got := tc.o.HandoverPending(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.o, got, tc.want)
		}
	}
}
