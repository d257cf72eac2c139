package pcmk

import (
	"context"
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Status is Pacemaker's view (crm_mon's XML output), the parts tnfctl status shows.
type Status struct {
	DC             string `json:"dc,omitempty"`
	WithQuorum     bool   `json:"withQuorum"`
	StonithEnabled bool   `json:"stonithEnabled"`
	// MaintenanceMode: Pacemaker's cluster-wide maintenance-mode, in which it watches, starts,
	// stops and fences nothing.
	MaintenanceMode bool `json:"maintenanceMode,omitempty"`
	// StonithTimeout is the cluster's stonith-timeout: how long a fault's fencing may take.
	StonithTimeout time.Duration  `json:"stonithTimeout,omitempty"`
	Nodes          []NodeStatus   `json:"nodes"`
	Resources      []ResourceRole `json:"resources"`
	Fencing        FenceHistory   `json:"fencing"`
	// History is each node's resource history: fail counts and migration thresholds.
	History []ResourceHistory `json:"history,omitempty"`
}

// ResourceHistory is one resource's fail count and migration threshold on one node.
type ResourceHistory struct {
	Node               string `json:"node"`
	Resource           string `json:"resource"`
	FailCount          int    `json:"failCount"`
	MigrationThreshold int    `json:"migrationThreshold"`
}

// FailCountInfinity is Pacemaker's INFINITY: a resource banned from the node.
const FailCountInfinity = 1000000

// NodeStatus is one node as Pacemaker sees it.
type NodeStatus struct {
	Name    string `json:"name"`
	Online  bool   `json:"online"`
	Unclean bool   `json:"unclean"`
	Pending bool   `json:"pending"`
	// The other flags crm_mon gives a node, for the metrics.
	Type          string `json:"type,omitempty"`
	Standby       bool   `json:"standby,omitempty"`
	StandbyOnFail bool   `json:"standbyOnFail,omitempty"`
	Maintenance   bool   `json:"maintenance,omitempty"`
	Shutdown      bool   `json:"shutdown,omitempty"`
	ExpectedUp    bool   `json:"expectedUp,omitempty"`
	IsDC          bool   `json:"isDC,omitempty"`
	// Attributes are the node's attributes crm_mon shows (both lifetimes), by name: the etcd
	// agent's among them, whose names and formats the agent defines.
	Attributes map[string]string `json:"attributes,omitempty"`
}

// AdministrativeStandby says whether an administrator put the node in standby. Pacemaker
// marks a node that is still joining (pending) as in standby too: "not ready to run resources"
// (lib/pengine/unpack.c). That is no administrator's setting.
func (n NodeStatus) AdministrativeStandby() bool { return n.Standby && !n.Pending }

// ResourceRole is one resource instance: its role on the node it runs on ("Stopped" instances
// have no node).
type ResourceRole struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Role   string `json:"role"`
	Node   string `json:"node,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	// Clone and Group are the clone or group the instance belongs to.
	Clone string `json:"clone,omitempty"`
	Group string `json:"group,omitempty"`
	// The other flags crm_mon gives a resource, for the metrics.
	Active         bool `json:"active,omitempty"`
	Unmanaged      bool `json:"unmanaged,omitempty"`
	Orphaned       bool `json:"orphaned,omitempty"`
	Blocked        bool `json:"blocked,omitempty"`
	FailureIgnored bool `json:"failureIgnored,omitempty"`
	// TargetRole is the role an administrator set (pcs resource disable: Stopped); empty when
	// none was.
	TargetRole string `json:"targetRole,omitempty"`
}

// FenceStatus is how a fencing action stands, as crm_mon names it.
type FenceStatus string

const (
	FenceSucceeded FenceStatus = "success"
	FenceFailed    FenceStatus = "failed"
	FencePending   FenceStatus = "pending"
)

// FenceEvent is one entry of the fencing history.
type FenceEvent struct {
	Action     string      `json:"action"`
	Target     string      `json:"target"`
	Delegate   string      `json:"delegate,omitempty"`
	Status     FenceStatus `json:"status"`
	ExitReason string      `json:"exitReason,omitempty"`
	Completed  string      `json:"completed,omitempty"`
}

// ByHuman is the delegate crm_mon gives a fencing an administrator confirmed (stonith_admin
// --confirm): no device ran.
const ByHuman = "a human"

// FenceHistory is Pacemaker's fencing history, newest first as crm_mon orders it (the queries
// do not rely on the order).
type FenceHistory []FenceEvent

// Successes is how many fencings of target succeeded.
func (h FenceHistory) Successes(target string) int {
	n := 0
	for _, e := range h {
		if e.Target == target && e.Status == FenceSucceeded {
			n++
		}
	}
	return n
}

// LastSuccess is when the latest successful fencing of target completed, among those completed
// no later than notAfter (any when notAfter is zero); false when there is none.
func (h FenceHistory) LastSuccess(target string, notAfter time.Time) (time.Time, bool) {
	var last time.Time
	for _, e := range h {
		at, ok := e.CompletedAt()
		if ok && e.Target == target && e.Status == FenceSucceeded && at.After(last) && (notAfter.IsZero() || !at.After(notAfter)) {
			last = at
		}
	}
	return last, !last.IsZero()
}

// SucceededAfter reports whether a fencing of target succeeded after t. crm_mon gives whole
// seconds: an event within t's own second does not count.
func (h FenceHistory) SucceededAfter(target string, t time.Time) bool {
	done, ok := h.LastSuccess(target, time.Time{})
	return ok && done.After(t.Truncate(time.Second))
}

// Pending tells whether a fencing is running now.
func (h FenceHistory) Pending() bool {
	for _, e := range h {
		if e.Status == FencePending {
			return true
		}
	}
	return false
}

// CompletedAt is when the event completed (crm_mon gives whole seconds); false for a pending one.
// crm_mon writes UTC as "2026-11-22 10:04:31Z" and any other zone with its offset after a space,
// "2026-11-22 11:04:31 +01:00" (crm_time_as_string).
func (f FenceEvent) CompletedAt() (time.Time, bool) {
	for _, layout := range []string{"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 -07:00"} {
		if t, err := time.Parse(layout, f.Completed); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type crmMon struct {
	Summary struct {
		DC struct {
			Present    bool   `xml:"present,attr"`
			Name       string `xml:"name,attr"`
			WithQuorum bool   `xml:"with_quorum,attr"`
		} `xml:"current_dc"`
		Options struct {
			StonithEnabled   bool  `xml:"stonith-enabled,attr"`
			MaintenanceMode  bool  `xml:"maintenance-mode,attr"`
			StonithTimeoutMs int64 `xml:"stonith-timeout-ms,attr"`
		} `xml:"cluster_options"`
	} `xml:"summary"`
	Nodes []struct {
		Name          string `xml:"name,attr"`
		Type          string `xml:"type,attr"`
		Online        bool   `xml:"online,attr"`
		Unclean       bool   `xml:"unclean,attr"`
		Pending       bool   `xml:"pending,attr"`
		Standby       bool   `xml:"standby,attr"`
		StandbyOnFail bool   `xml:"standby_onfail,attr"`
		Maintenance   bool   `xml:"maintenance,attr"`
		Shutdown      bool   `xml:"shutdown,attr"`
		ExpectedUp    bool   `xml:"expected_up,attr"`
		IsDC          bool   `xml:"is_dc,attr"`
	} `xml:"nodes>node"`
	NodeAttributes []struct {
		Name       string `xml:"name,attr"`
		Attributes []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"attribute"`
	} `xml:"node_attributes>node"`
	Resources struct {
		Plain  []crmResource `xml:"resource"`
		Clones []crmGroup    `xml:"clone"`
		Groups []crmGroup    `xml:"group"`
	} `xml:"resources"`
	History []struct {
		Name      string `xml:"name,attr"`
		Resources []struct {
			ID                 string `xml:"id,attr"`
			FailCount          string `xml:"fail-count,attr"`
			MigrationThreshold string `xml:"migration-threshold,attr"`
		} `xml:"resource_history"`
	} `xml:"node_history>node"`
	Fencing []struct {
		Action     string      `xml:"action,attr"`
		Target     string      `xml:"target,attr"`
		Delegate   string      `xml:"delegate,attr"`
		Status     FenceStatus `xml:"status,attr"`
		ExitReason string      `xml:"exit-reason,attr"`
		Completed  string      `xml:"completed,attr"`
	} `xml:"fence_history>fence_event"`
}

// crmGroup is a clone or a group: its resources (a clone of a group is not used here).
type crmGroup struct {
	ID        string        `xml:"id,attr"`
	Resources []crmResource `xml:"resource"`
}

type crmResource struct {
	ID             string `xml:"id,attr"`
	Agent          string `xml:"resource_agent,attr"`
	Role           string `xml:"role,attr"`
	Failed         bool   `xml:"failed,attr"`
	Active         bool   `xml:"active,attr"`
	Managed        bool   `xml:"managed,attr"`
	Orphaned       bool   `xml:"orphaned,attr"`
	Blocked        bool   `xml:"blocked,attr"`
	FailureIgnored bool   `xml:"failure_ignored,attr"`
	TargetRole     string `xml:"target_role,attr"`
	Nodes          []struct {
		Name string `xml:"name,attr"`
	} `xml:"node"`
}

// Status reads crm_mon once, with the whole fencing history (level 3: level 2 keeps only the
// latest success per node, which hides a node fenced twice).
func (t Tools) Status(ctx context.Context) (Status, error) {
	out, err := t.StatusXML(ctx)
	if err != nil {
		return Status{}, err
	}
	return parseStatus([]byte(out))
}

// StatusXML is crm_mon's XML that Status reads.
func (t Tools) StatusXML(ctx context.Context) (string, error) {
	argv := StatusCommand()
	return t.Run(ctx, argv[0], argv[1:]...)
}

// StatusCommand is the command line StatusXML runs (its answers are captured per Pacemaker
// version for the parser's tests).
func StatusCommand() []string {
	return []string{"crm_mon", "--one-shot", "--inactive", "--fence-history=3", "--show-node-attributes", "--output-as=xml"}
}

func parseStatus(data []byte) (Status, error) {
	var m crmMon
	if err := xml.Unmarshal(data, &m); err != nil {
		return Status{}, fmt.Errorf("crm_mon output: %w", err)
	}
	s := Status{WithQuorum: m.Summary.DC.WithQuorum, StonithEnabled: m.Summary.Options.StonithEnabled,
		MaintenanceMode: m.Summary.Options.MaintenanceMode, StonithTimeout: time.Duration(m.Summary.Options.StonithTimeoutMs) * time.Millisecond,
		Nodes: []NodeStatus{}, Resources: []ResourceRole{}, Fencing: FenceHistory{}}
	if m.Summary.DC.Present {
		s.DC = m.Summary.DC.Name
	}
	attributes := map[string]map[string]string{}
	for _, n := range m.NodeAttributes {
		for _, a := range n.Attributes {
			if attributes[n.Name] == nil {
				attributes[n.Name] = map[string]string{}
			}
			attributes[n.Name][a.Name] = a.Value
		}
	}
	for _, n := range m.Nodes {
		s.Nodes = append(s.Nodes, NodeStatus{Name: n.Name, Online: n.Online, Unclean: n.Unclean, Pending: n.Pending,
			Type: n.Type, Standby: n.Standby, StandbyOnFail: n.StandbyOnFail, Maintenance: n.Maintenance,
			Shutdown: n.Shutdown, ExpectedUp: n.ExpectedUp, IsDC: n.IsDC,
			Attributes: attributes[n.Name]})
	}
	add := func(r crmResource, clone, group string) {
		role := ResourceRole{ID: r.ID, Agent: r.Agent, Role: r.Role, Failed: r.Failed, Clone: clone, Group: group,
			Active: r.Active, Unmanaged: !r.Managed, Orphaned: r.Orphaned, Blocked: r.Blocked, FailureIgnored: r.FailureIgnored,
			TargetRole: r.TargetRole}
		if len(r.Nodes) == 0 {
			s.Resources = append(s.Resources, role)
		}
		for _, n := range r.Nodes {
			role.Node = n.Name
			s.Resources = append(s.Resources, role)
		}
	}
	for _, r := range m.Resources.Plain {
		add(r, "", "")
	}
	for _, c := range m.Resources.Clones {
		for _, r := range c.Resources {
			add(r, c.ID, "")
		}
	}
	for _, g := range m.Resources.Groups {
		for _, r := range g.Resources {
			add(r, "", g.ID)
		}
	}
	sort.SliceStable(s.Resources, func(i, j int) bool {
		a, b := s.Resources[i], s.Resources[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Node < b.Node
	})
	for _, f := range m.Fencing {
		s.Fencing = append(s.Fencing, FenceEvent(f))
	}
	for _, n := range m.History {
		for _, r := range n.Resources {
			h := ResourceHistory{Node: n.Name, Resource: r.ID}
			var err error
			if h.FailCount, err = score(r.FailCount); err == nil {
				h.MigrationThreshold, err = score(r.MigrationThreshold)
			}
			if err != nil {
				return Status{}, fmt.Errorf("crm_mon output: node_history of %s, resource %s: %w", n.Name, r.ID, err)
			}
			s.History = append(s.History, h)
		}
	}
	return s, nil
}

// Peer is the node the status lists other than name; the zero NodeStatus when there is none.
func (s Status) Peer(name string) NodeStatus {
	for _, n := range s.Nodes {
		if n.Name != name {
			return n
		}
	}
	return NodeStatus{}
}

// Node is the node called name; the zero NodeStatus when the status does not list it.
func (s Status) Node(name string) NodeStatus {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n
		}
	}
	return NodeStatus{}
}

// Role is the role of resource id on node ("Stopped" when it does not run there).
func (s Status) Role(id, node string) string {
	for _, r := range s.Resources {
		if r.ID == id && r.Node == node {
			return r.Role
		}
	}
	return "Stopped"
}

// score reads a Pacemaker score as crm_mon writes it: a number, "INFINITY", or nothing (0).
func score(v string) (int, error) {
	switch v {
	case "":
		return 0, nil
	case "INFINITY", "+INFINITY":
		return FailCountInfinity, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("score %q is not a number", v)
	}
	return min(n, FailCountInfinity), nil
}
