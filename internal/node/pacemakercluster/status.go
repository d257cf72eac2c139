package pacemakercluster

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Node is one of the cluster's two nodes as cluster.yaml names it.
type Node struct {
	Name string
	IP   string
}

// Input is what the publishing node read: cluster.yaml's nodes, and Pacemaker's status and its
// CIB's configuration, both of which answered.
type Input struct {
	Nodes         []Node
	Pacemaker     pcmk.Status
	Configuration pcmk.Configuration
}

// The resources the object reports, by the IDs the layer's configuration gives them (their
// agents are settings: kubelet's is systemd's unless cluster.yaml names another).
const (
	kubeletResource = "kubelet"
	etcdResource    = "etcd"
)

// expectedNodes is the number of nodes a two-node cluster has.
const expectedNodes = 2

// Build is the object's status at now: the cluster's conditions, and each node's with its
// kubelet and etcd resources and the fence devices that fence it. A condition whose status has
// not changed since prev (nil: none published) keeps prev's transition time, so that a reader
// sees when it last changed.
func Build(in Input, prev *Status, now time.Time) Status {
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	if prev != nil && prev.LastUpdated.After(at.Time) {
		at = prev.LastUpdated // the CRD refuses a lastUpdated that goes back: a node whose clock is behind the last publisher's
	}
	nodes := make([]NodeStatus, 0, len(in.Nodes))
	for _, n := range in.Nodes {
		nodes = append(nodes, buildNode(in, n))
	}
	cluster := []metav1.Condition{
		condition(NodeCountAsExpected, len(in.Pacemaker.Nodes) == expectedNodes, "AsExpected", nodeCountReason(len(in.Pacemaker.Nodes)),
			fmt.Sprintf("expected %d nodes, Pacemaker has %d", expectedNodes, len(in.Pacemaker.Nodes))),
		condition(InService, !in.Pacemaker.MaintenanceMode, "InService", "InMaintenance",
			inServiceMessage(!in.Pacemaker.MaintenanceMode, "Pacemaker")),
	}
	var unhealthy []string
	for _, c := range cluster {
		if c.Status != metav1.ConditionTrue {
			unhealthy = append(unhealthy, c.Message)
		}
	}
	// What keeps Pacemaker from failing over, maintenance mode aside (InService says it): fencing
	// disabled, a node in standby, a resource unmanaged or disabled. The field's object reads
	// healthy with fencing disabled; this one does not.
	for _, c := range health.FailoverOffCauses(&in.Pacemaker) {
		if c.Kind != health.CauseMaintenanceMode {
			unhealthy = append(unhealthy, c.String())
		}
	}
	for _, n := range nodes {
		if c := meta.FindStatusCondition(n.Conditions, Healthy); c.Status != metav1.ConditionTrue {
			unhealthy = append(unhealthy, n.NodeName+": "+c.Message)
		}
	}
	cluster = append(cluster, condition(Healthy, len(unhealthy) == 0, "ClusterHealthy", "ClusterUnhealthy", healthyMessage("both nodes serve and fail over", unhealthy)))
	st := Status{Conditions: cluster, LastUpdated: at, Nodes: &nodes}
	carryTransitions(&st, prev, at)
	return st
}

func nodeCountReason(n int) string {
	if n > expectedNodes {
		return "ExcessiveNodes"
	}
	return "InsufficientNodes"
}

func buildNode(in Input, n Node) NodeStatus {
	i := slices.IndexFunc(in.Pacemaker.Nodes, func(p pcmk.NodeStatus) bool { return p.Name == n.Name })
	var pn pcmk.NodeStatus
	if i >= 0 {
		pn = in.Pacemaker.Nodes[i]
	}
	member, memberMessage := i >= 0 && (pn.Type == "" || pn.Type == "member"), "the node is a cluster member"
	switch {
	case i < 0:
		memberMessage = "Pacemaker does not list the node"
	case !member:
		memberMessage = "the node is a " + pn.Type + " node, not a cluster member"
	}
	standby := pn.AdministrativeStandby() || pn.StandbyOnFail
	inMaintenance := pn.Maintenance || in.Pacemaker.MaintenanceMode
	resources := []ResourceStatus{
		{Name: Kubelet, Conditions: resourceConditions(in.Pacemaker, kubeletResource, n.Name, inMaintenance)},
		{Name: Etcd, Conditions: resourceConditions(in.Pacemaker, etcdResource, n.Name, inMaintenance)},
	}
	agents := fencingAgents(in, n.Name, inMaintenance)
	// As the field's: a device that runs, is active and has not failed can fence the node.
	available := slices.ContainsFunc(agents, func(a FencingAgentStatus) bool {
		return meta.IsStatusConditionTrue(a.Conditions, Started) && meta.IsStatusConditionTrue(a.Conditions, Active) &&
			meta.IsStatusConditionTrue(a.Conditions, Operational)
	})
	allHealthy := len(agents) > 0 && !slices.ContainsFunc(agents, func(a FencingAgentStatus) bool { return !meta.IsStatusConditionTrue(a.Conditions, Healthy) })
	conds := []metav1.Condition{
		condition(Online, pn.Online, "Online", "Offline", onOff(pn.Online, "Pacemaker sees the node online", "the node is offline: not in Pacemaker's membership")),
		condition(InService, !pn.Maintenance, "InService", "InMaintenance", inServiceMessage(!pn.Maintenance, "the node")+
			onOff(!pn.Maintenance, "", " (pcs node unmaintenance "+n.Name+")")),
		condition(Active, !standby, "Active", "Standby", onOff(!standby, "the node may run resources", "the node is in standby: nothing runs there (pcs node unstandby "+n.Name+")")),
		condition(Ready, !pn.Pending, "Ready", "Pending", onOff(!pn.Pending, "the node has joined", "the node is still joining the cluster")),
		condition(Clean, !pn.Unclean, "Clean", "Unclean", onOff(!pn.Unclean, "the node's state is known",
			"the node is unclean: Pacemaker cannot tell whether it still runs anything until it is fenced")),
		condition(Member, member, "Member", "NotMember", memberMessage),
		condition(FencingAvailable, available, "FencingAvailable", "FencingUnavailable",
			onOff(available, "a fence device for the node runs", "no fence device for the node runs: a lost node cannot be proven off")),
		condition(FencingHealthy, allHealthy, "FencingHealthy", "FencingUnhealthy",
			onOff(allHealthy, "every fence device for the node is healthy", "a fence device for the node is not healthy (see fencingAgents)")),
	}
	var unhealthy []string
	for _, c := range conds {
		// As the field's: a node one of whose fence devices fails is still fenced by another
		// (FencingHealthy says so on its own).
		if c.Status != metav1.ConditionTrue && c.Type != FencingHealthy {
			unhealthy = append(unhealthy, c.Message)
		}
	}
	for _, r := range resources {
		if c := meta.FindStatusCondition(r.Conditions, Healthy); c.Status != metav1.ConditionTrue {
			unhealthy = append(unhealthy, r.Name+": "+c.Message)
		}
	}
	conds = append(conds, condition(Healthy, len(unhealthy) == 0, "NodeHealthy", "NodeUnhealthy", healthyMessage("the node serves", unhealthy)))
	var addrs []NodeAddress
	// cluster.yaml's address, validated there; an IPv4-mapped one as IPv4, the CRD's canonical form.
	if ip, err := netip.ParseAddr(n.IP); err == nil {
		addrs = append(addrs, NodeAddress{Type: InternalIP, Address: ip.Unmap().String()})
	}
	return NodeStatus{NodeName: n.Name, Addresses: addrs, Conditions: conds, Resources: resources, FencingAgents: agents}
}

// resourceConditions are the conditions of resource id's instance on node; where none runs
// there, the clone's settings (managed, target role) are read from another instance, since a
// stopped one is listed on no node.
func resourceConditions(p pcmk.Status, id, node string, inMaintenance bool) []metav1.Condition {
	var on, any *pcmk.ResourceRole
	for i := range p.Resources {
		r := &p.Resources[i]
		if r.ID != id {
			continue
		}
		if any == nil {
			any = r
		}
		if r.Node == node {
			on = r
		}
	}
	if on != nil {
		any = on
	}
	return instanceConditions(on, any, any, id == etcdResource, inMaintenance)
}

// instanceConditions: on is the instance on the node (nil: none runs there), settings the
// resource whose settings apply, named the one the undo commands name (nil: none known). A
// voter is required of etcd: a learner (Unpromoted) runs, but does not yet hold the data.
func instanceConditions(on, settings, named *pcmk.ResourceRole, voter, inMaintenance bool) []metav1.Condition {
	if settings == nil {
		settings = on
	}
	var manage, enable string
	if named != nil {
		manage, enable = health.UndoCommands(*named)
		manage, enable = " ("+manage+")", " ("+enable+")"
	}
	managed := settings != nil && !settings.Unmanaged
	enabled := settings != nil && settings.TargetRole != "Stopped"
	operational := on == nil || !on.Failed
	active := on != nil && on.Active
	started := on != nil && slices.Contains([]string{"Started", "Promoted", "Unpromoted"}, on.Role)
	schedulable := on == nil || !on.Blocked
	role := "not running here"
	if on != nil {
		role = on.Role
	}
	conds := []metav1.Condition{
		condition(InService, !inMaintenance, "InService", "InMaintenance", inServiceMessage(!inMaintenance, "the resource")),
		condition(Managed, managed, "Managed", "Unmanaged", onOff(managed, "Pacemaker manages it", "unmanaged: Pacemaker neither watches nor recovers it"+manage)),
		condition(Enabled, enabled, "Enabled", "Disabled", onOff(enabled, "enabled", "disabled: Pacemaker keeps it stopped"+enable)),
		condition(Operational, operational, "Operational", "Failed", onOff(operational, "no failure", "failed")),
		condition(Active, active, "Active", "Inactive", onOff(active, "active", "inactive")),
		condition(Started, started, "Started", "Stopped", "role "+role),
		condition(Schedulable, schedulable, "Schedulable", "Unschedulable", onOff(schedulable, "Pacemaker may place it", "blocked: Pacemaker cannot place it")),
	}
	var unhealthy []string
	for _, c := range conds[1:] { // a resource in maintenance still serves
		if c.Status != metav1.ConditionTrue {
			unhealthy = append(unhealthy, c.Type+": "+c.Message)
		}
	}
	if voter && started && on.Role != "Promoted" {
		unhealthy = append(unhealthy, "a learner, not yet a voter")
	}
	return append(conds, condition(Healthy, len(unhealthy) == 0, "ResourceHealthy", "ResourceUnhealthy", healthyMessage("runs", unhealthy)))
}

// fencingAgents are the fence devices whose pcmk_host_list names node, each with the
// conditions of its stonith resource.
func fencingAgents(in Input, node string, inMaintenance bool) []FencingAgentStatus {
	agents := []FencingAgentStatus{}
	for _, d := range in.Configuration.FenceDevices {
		if !slices.Contains(d.Targets, node) {
			continue
		}
		var running *pcmk.ResourceRole
		for i, r := range in.Pacemaker.Resources {
			if r.ID == d.ID {
				running = &in.Pacemaker.Resources[i]
			}
		}
		method := MethodRedfish
		if strings.Contains(d.Agent, "ipmi") {
			method = MethodIPMI
		}
		named := &pcmk.ResourceRole{ID: d.ID, Agent: "stonith:" + d.Agent}
		agents = append(agents, FencingAgentStatus{Name: d.ID, Method: method, Conditions: instanceConditions(running, nil, named, false, inMaintenance)})
	}
	return agents
}

func condition(typ string, ok bool, trueReason, falseReason, message string) metav1.Condition {
	if ok {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: trueReason, Message: message}
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: falseReason, Message: message}
}

func onOff(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

func inServiceMessage(ok bool, what string) string {
	if ok {
		return what + " is not in maintenance"
	}
	return what + " is in maintenance: Pacemaker watches, recovers and fences nothing there"
}

func healthyMessage(healthy string, unhealthy []string) string {
	if len(unhealthy) == 0 {
		return healthy
	}
	return strings.Join(unhealthy, "; ")
}

// carryTransitions sets every condition's transition time: prev's where prev held the same
// type with the same status at the same place, else at.
func carryTransitions(st *Status, prev *Status, at metav1.Time) {
	var prevNodes []NodeStatus
	if prev != nil && prev.Nodes != nil {
		prevNodes = *prev.Nodes
	}
	carry(st.Conditions, conditionsOf(prev), at)
	for i := range *st.Nodes {
		n := &(*st.Nodes)[i]
		var pn *NodeStatus
		if j := slices.IndexFunc(prevNodes, func(p NodeStatus) bool { return p.NodeName == n.NodeName }); j >= 0 {
			pn = &prevNodes[j]
		}
		var prevConds []metav1.Condition
		var prevResources []ResourceStatus
		var prevAgents []FencingAgentStatus
		if pn != nil {
			prevConds, prevResources, prevAgents = pn.Conditions, pn.Resources, pn.FencingAgents
		}
		carry(n.Conditions, prevConds, at)
		for k := range n.Resources {
			var old []metav1.Condition
			if j := slices.IndexFunc(prevResources, func(r ResourceStatus) bool { return r.Name == n.Resources[k].Name }); j >= 0 {
				old = prevResources[j].Conditions
			}
			carry(n.Resources[k].Conditions, old, at)
		}
		for k := range n.FencingAgents {
			var old []metav1.Condition
			if j := slices.IndexFunc(prevAgents, func(a FencingAgentStatus) bool { return a.Name == n.FencingAgents[k].Name }); j >= 0 {
				old = prevAgents[j].Conditions
			}
			carry(n.FencingAgents[k].Conditions, old, at)
		}
	}
}

func conditionsOf(s *Status) []metav1.Condition {
	if s == nil {
		return nil
	}
	return s.Conditions
}

func carry(conds, prev []metav1.Condition, at metav1.Time) {
	for i := range conds {
		conds[i].LastTransitionTime = at
		if p := meta.FindStatusCondition(prev, conds[i].Type); p != nil && p.Status == conds[i].Status && !p.LastTransitionTime.IsZero() {
			conds[i].LastTransitionTime = p.LastTransitionTime
		}
	}
}
