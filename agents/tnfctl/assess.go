package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

// The states status leads with, for people (its first line) and scripts (--json's "state").
const (
	stateHealthy       = "healthy"        // both nodes serve, etcd has two voters
	stateDegraded      = "degraded"       // one node serves alone
	stateRecovering    = "recovering"     // both members, Pacemaker still bringing etcd up
	stateInert         = "inert"          // booted alone, waits for the peer
	stateInstallerEtcd = "installer-etcd" // waits for the peer; the installer's etcd runs here meanwhile
	stateBlocked       = "blocked"        // the fencing fails, or etcd refuses its data
	stateSetupFailed   = "setup-failed"   // tnfctl setup failed on this node
	statePacemakerDown = "pacemaker-down" // Corosync answers, Pacemaker does not
)

// assess says in one line where the cluster stands and what to do next. The local node is
// the one Corosync shows joined when only one is: a node always sees itself as a member.
func assess(st clusterStatus) (state, line string) {
	var members, absent []string
	for n, joined := range st.Corosync.Nodes {
		if joined {
			members = append(members, n)
		} else {
			absent = append(absent, n)
		}
	}
	sort.Strings(members)
	sort.Strings(absent)
	peer := "the peer"
	if len(absent) == 1 {
		peer = absent[0]
	}
	switch {
	case st.Setup.State == nodesetup.StateFailed:
		return stateSetupFailed, "SETUP FAILED on this node (see Setup below); fix what it names, then `tnfctl setup` runs it again."
	case st.Pacemaker == nil:
		return statePacemakerDown, "PACEMAKER NOT ANSWERING on this node: `systemctl status pacemaker`; `tnfctl gather` for support."
	case st.Corosync.WaitingForAll && !st.Corosync.Quorate && st.InstallerKubelet:
		return stateInstallerEtcd, fmt.Sprintf("INSTALLER'S ETCD: waits for %s to join; meanwhile cri-o and kubelet run the installer's etcd here, "+
			"as before the layer, until the handover. Do not confirm %s down: its etcd is the installer's other member.", peer, peer)
	case st.Corosync.WaitingForAll && !st.Corosync.Quorate:
		return stateInert, fmt.Sprintf("INERT: waits for %s to join; no cri-o, kubelet or etcd here. If %s is off for good: `tnfctl confirm-peer-down`.", peer, peer)
	case st.FencingFails != nil:
		return stateBlocked, fmt.Sprintf("BLOCKED: the fencing of %s fails, so etcd waits (see Fencing below). If %s is powered off: `tnfctl confirm-peer-down`.", peer, peer)
	}
	// A peer Pacemaker holds unclean is not proven off: etcd runs without a leader, whatever its
	// role says, until a fencing completes, and one may not have been tried yet (the fencing
	// waits for the transition that schedules it, and a busy node's transitions take time).
	for _, n := range st.Pacemaker.Nodes {
		if n.Unclean && !st.Corosync.Nodes[n.Name] {
			return stateBlocked, fmt.Sprintf("BLOCKED: %s is not fenced yet, so etcd waits. If %s is powered off: `tnfctl confirm-peer-down`.", n.Name, n.Name)
		}
	}
	for _, n := range st.Pacemaker.Nodes {
		switch why := n.Attributes[etcdnode.AttrDecision]; {
		case strings.Contains(why, decision.ServedWithoutData):
			return stateBlocked, "BLOCKED: neither node has etcd data, but this cluster served a cluster (see below). Mount the data disks; " +
				"if the data is gone for good: `tnfctl start-empty` (gives up everything it held)."
		case strings.Contains(why, decision.EtcdTooOld):
			return stateBlocked, fmt.Sprintf("BLOCKED: etcd on %s is older than the cluster's, which it cannot join (see below). "+
				"Update %s's layer (MCO's rollout does, in an update); never give data up for this.", n.Name, n.Name)
		case strings.Contains(why, contract.UnreadableReason):
			return stateBlocked, fmt.Sprintf("BLOCKED: etcd on %s cannot read what %s publishes: their layers are more than one contract apart (see below). "+
				"Update the older node's layer; with the API down, by hand (docs/operate.md#two-layers-too-far-apart).", n.Name, peer)
		case strings.HasPrefix(why, "refuse"):
			return stateBlocked, fmt.Sprintf("BLOCKED: etcd on %s refuses its data (see below). Bring %s back; if it is gone for good: `tnfctl accept-data-loss` (gives up its newer writes).", n.Name, peer)
		}
	}
	var voters []string
	for _, r := range st.Pacemaker.Resources {
		if r.Agent == "ocf:tnf:etcd" && r.Role == "Promoted" && st.Corosync.Nodes[r.Node] {
			voters = append(voters, r.Node)
		}
	}
	switch {
	case len(absent) == 0 && len(voters) == 2:
		return stateHealthy, "HEALTHY: both nodes serve; etcd has two voters."
	case len(absent) == 1 && len(voters) == 1:
		return stateDegraded, fmt.Sprintf("DEGRADED: %s serves alone; %s is away. Power it on or repair it: it rejoins by itself.", voters[0], peer)
	}
	if h := st.Handover; h != nil {
		return stateRecovering, fmt.Sprintf("RECOVERING: etcd is being handed over from the installer's static pod; this node waits for %s (see Handover). "+
			"The agent's etcd serves on %d of %d members.", h.Step, len(voters), len(members))
	}
	return stateRecovering, fmt.Sprintf("RECOVERING: etcd serves on %d of %d members; Pacemaker is acting (see Resources). Look again in a minute.", len(voters), len(members))
}
