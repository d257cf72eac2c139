// Package health is the one reading of where a two-node cluster stands, from what a node reads
// of it (Corosync, Pacemaker, the etcd agent's attributes, setup and the handover): a state, a
// line that names the cause and the next step, and an exit code. tnfctl status prints it, the
// metrics carry it, and the alerts read the metrics: none of them decides on its own what
// "healthy" means. Assess is a pure function.
package health

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencewait"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// State is where the cluster stands as one node sees it: status's first word, -o json's
// "state", tnf_health_state's label.
type State string

const (
	Healthy       State = "healthy"        // both nodes serve, etcd has two voters, Pacemaker would fail over
	Degraded      State = "degraded"       // one node serves alone
	Recovering    State = "recovering"     // both members, Pacemaker still bringing etcd up
	FailoverOff   State = "failover-off"   // an administrator's setting keeps Pacemaker from failing over
	InstallerEtcd State = "installer-etcd" // waits for the peer; the installer's etcd runs here meanwhile
	Inert         State = "inert"          // booted alone, waits for the peer
	Blocked       State = "blocked"        // the fencing fails, or etcd refuses its data
	Restoring     State = "restoring"      // tnfctl restore replaces etcd's data by a snapshot
	SetupFailed   State = "setup-failed"   // tnfctl setup failed on this node
	PacemakerDown State = "pacemaker-down" // Corosync answers, Pacemaker does not
	CorosyncDown  State = "corosync-down"  // Corosync does not answer
)

// States are every state, in the order help texts list them.
var States = []State{Healthy, Degraded, Recovering, FailoverOff, InstallerEtcd, Inert, Blocked, Restoring, SetupFailed, PacemakerDown, CorosyncDown}

// Exit codes of tnfctl status, for scripts.
const (
	ExitHealthy     = 0
	ExitDegraded    = 4 // serving, without redundancy (one node alone, or recovering)
	ExitNotServing  = 5 // this cluster serves nothing from here
	ExitFailoverOff = 6 // serving, but a fault would not fail over
)

// ExitCode is the state's exit code.
func (s State) ExitCode() int {
	switch s {
	case Healthy:
		return ExitHealthy
	case Degraded, Recovering, InstallerEtcd:
		return ExitDegraded
	case FailoverOff:
		return ExitFailoverOff
	}
	return ExitNotServing
}

// Observation is what a node read.
type Observation struct {
	Corosync   *pcmk.Membership // nil when Corosync did not answer
	Pacemaker  *pcmk.Status     // nil when Pacemaker did not answer
	SetupState string           // one of nodesetup.States
	// SetUpBefore: a setup completed on this node once (nodesetup.Marker). A later run that
	// failed (a reconfiguration, a password applied by hand) leaves a node that serves.
	SetUpBefore bool
	// FencingFails: the fencing of the absent peer has failed since its last success.
	FencingFails bool
	// Handover is this node's handover from the installer's etcd while it is not done.
	Handover *handover.State
	// InstallerKubelet: cri-o and kubelet run the installer's etcd here until the handover.
	InstallerKubelet bool
	// SetupReason is setup's reason beside SetupState: why it failed, or why this node is a
	// guest (nodesetup.State).
	SetupReason string
	// Configuration is the CIB's configuration (nil when it did not answer): the field's etcd
	// agent's cluster properties and the fence devices.
	Configuration *pcmk.Configuration
	// SecondEtcd are the manifests with an etcd container the static pod guard took out of the
	// kubelet's folder here, until an administrator has read them (staticpod.RefusedFile).
	SecondEtcd []staticpod.Refused
}

// OperatorEtcdAgent is the agent the cluster-etcd-operator's configuration runs etcd with.
const OperatorEtcdAgent = "ocf:heartbeat:podman-etcd"

// The field's etcd agent's claims, which say where its cluster stands: node attributes
// (reboot lifetime) and cluster properties (podman-etcd).
const (
	AttrForceNewCluster = "force_new_cluster" // on the node that forces a new cluster
	PropLearnerNode     = "learner_node"      // the node whose member rejoins as a learner
	PropStandaloneNode  = "standalone_node"   // the node that serves as a cluster of one
)

// GuestReason says why this node is a guest of the operator's configuration ("" when it is
// not): setup's record, else Pacemaker running etcd through the operator's agent.
func (o Observation) GuestReason() string {
	if o.SetupState == nodesetup.StateGuest {
		return o.SetupReason
	}
	if o.Pacemaker == nil {
		return ""
	}
	for _, r := range o.Pacemaker.Resources {
		if r.Agent == OperatorEtcdAgent {
			return "Pacemaker runs etcd with " + OperatorEtcdAgent + ", as the cluster-etcd-operator's two-node jobs set it up"
		}
	}
	return ""
}

// GuestVoter says whether podman-etcd's etcd instance r is a voter: its clone has no promoted
// role, so a started instance is one unless its learner_node property names the node, or its
// standalone_node property names the other node (podman-etcd's "peer active but not a voter").
func GuestVoter(r pcmk.ResourceRole, props map[string]string) bool {
	standalone := props[PropStandaloneNode]
	return r.Agent == OperatorEtcdAgent && r.Role == "Started" && props[PropLearnerNode] != r.Node && (standalone == "" || standalone == r.Node)
}

// UncheckedBMCs are the fence devices that take any certificate from their BMC
// (ssl_insecure): whoever answers at the BMC's address can fake a power-off.
func (o Observation) UncheckedBMCs() []string {
	if o.Configuration == nil {
		return nil
	}
	var ids []string
	for _, d := range o.Configuration.FenceDevices {
		if d.Insecure {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// Cause is one setting that keeps Pacemaker from failing over, with the command that undoes it.
type Cause struct {
	Kind    string `json:"kind"`              // one of the Cause kinds below
	Subject string `json:"subject,omitempty"` // the node or resource it applies to
	Undo    string `json:"undo"`
}

// Cause kinds, as tnf_failover_off's cause label names them.
const (
	CauseMaintenanceMode = "maintenance-mode" // Pacemaker watches and recovers nothing
	CauseFencingDisabled = "fencing-disabled" // stonith-enabled=false: no node can be proven off
	CauseNodeStandby     = "node-standby"     // nothing runs on the node
	CauseNodeMaintenance = "node-maintenance" // nothing on the node is watched
	CauseUnmanaged       = "unmanaged"        // the resource is neither watched nor recovered
	CauseDisabled        = "disabled"         // the resource is kept stopped
)

// CauseKinds are every Cause kind.
var CauseKinds = []string{CauseMaintenanceMode, CauseFencingDisabled, CauseNodeStandby, CauseNodeMaintenance, CauseUnmanaged, CauseDisabled}

func (c Cause) String() string {
	switch c.Kind {
	case CauseMaintenanceMode:
		return "Pacemaker is in maintenance mode: it watches, recovers and fences nothing"
	case CauseFencingDisabled:
		return "fencing is disabled (stonith-enabled=false): no lost node can be proven off, so none is replaced"
	case CauseNodeStandby:
		return c.Subject + " is in standby: nothing runs there"
	case CauseNodeMaintenance:
		return c.Subject + " is in maintenance: nothing there is watched"
	case CauseUnmanaged:
		return c.Subject + " is unmanaged: Pacemaker neither watches nor recovers it"
	case CauseDisabled:
		return c.Subject + " is disabled: Pacemaker keeps it stopped"
	}
	return c.Kind
}

// FailoverOffCauses lists the settings in p that keep Pacemaker from failing over, once each: the
// cluster's maintenance mode and fencing, nodes in standby or maintenance, and resources (a
// clone by its name) unmanaged or disabled. What maintenance mode implies (every resource
// unmanaged) is not listed again.
func FailoverOffCauses(p *pcmk.Status) []Cause {
	if p == nil {
		return nil
	}
	var causes []Cause
	add := func(c Cause) {
		if !slices.Contains(causes, c) {
			causes = append(causes, c)
		}
	}
	if p.MaintenanceMode {
		add(Cause{Kind: CauseMaintenanceMode, Undo: "pcs property set maintenance-mode=false"})
	}
	if !p.StonithEnabled {
		add(Cause{Kind: CauseFencingDisabled, Undo: "pcs property set stonith-enabled=true"})
	}
	for _, n := range p.Nodes {
		if n.AdministrativeStandby() {
			add(Cause{Kind: CauseNodeStandby, Subject: n.Name, Undo: "pcs node unstandby " + n.Name})
		}
		if n.Maintenance && !p.MaintenanceMode {
			add(Cause{Kind: CauseNodeMaintenance, Subject: n.Name, Undo: "pcs node unmaintenance " + n.Name})
		}
	}
	for _, r := range p.Resources {
		name := ResourceName(r)
		manage, enable := UndoCommands(r)
		if r.Unmanaged && !p.MaintenanceMode && !slices.ContainsFunc(p.Nodes, func(n pcmk.NodeStatus) bool { return n.Maintenance && n.Name == r.Node }) {
			add(Cause{Kind: CauseUnmanaged, Subject: name, Undo: manage})
		}
		if r.TargetRole == "Stopped" {
			add(Cause{Kind: CauseDisabled, Subject: name, Undo: enable})
		}
	}
	return causes
}

// ResourceName is the name pcs commands take for r: its clone's, else its own.
func ResourceName(r pcmk.ResourceRole) string { return cmp.Or(r.Clone, r.ID) }

// UndoCommands are the commands that make r managed again and enable it again. pcs 0.12
// refuses its resource commands for a fence device ("does not accept stonith resources"); its
// stonith commands work from 0.10 on.
func UndoCommands(r pcmk.ResourceRole) (manage, enable string) {
	name := ResourceName(r)
	if strings.HasPrefix(r.Agent, "stonith:") {
		return "pcs stonith meta " + name + " is-managed=true", "pcs stonith enable " + name
	}
	return "pcs resource manage " + name, "pcs resource enable " + name
}

// FencingFails says whether the fencing of a node absent from Corosync, which Pacemaker holds
// unclean, has failed since its last success.
func FencingFails(c *pcmk.Membership, p *pcmk.Status) bool {
	if c == nil || p == nil {
		return false
	}
	for n, joined := range c.Nodes {
		if _, failing := fencewait.Find(*p, n); !joined && failing {
			return true
		}
	}
	return false
}

// HandoverPending says whether etcd on this node is still the installer's, or being handed over:
// the agent's etcd is not meant to serve here yet.
func (o Observation) HandoverPending() bool { return o.InstallerKubelet || o.Handover != nil }

// Restore is the restore from a snapshot the CIB records as under way (nil: none, or the CIB's
// configuration did not answer).
func (o Observation) Restore() (*etcdnode.Restore, error) {
	if o.Configuration == nil {
		return nil, nil
	}
	v := o.Configuration.Properties[etcdnode.PropRestore]
	if v == "" {
		return nil, nil
	}
	r, err := etcdnode.ParseRestore(v)
	if err != nil || !r.UnderWay() {
		return nil, err
	}
	return &r, nil
}

// Assessment is a state, the line that says why and what to do, and the settings that keep
// Pacemaker from failing over (also listed when another state leads); on a guest, why it is one;
// the fence devices that take any certificate from their BMC (UncheckedBMCs); and a restore
// under way.
type Assessment struct {
	State        State
	Line         string
	FailoverOff  []Cause
	Guest        string
	UncheckedBMC []string
	Restore      *etcdnode.Restore
	// SecondEtcd is the line for the manifests the static pod guard refused ("" none).
	SecondEtcd string
}

// Assess says where the cluster stands and what to do next. The local node is the one Corosync
// shows joined when only one is: a node always sees itself as a member.
func Assess(o Observation) Assessment {
	off := FailoverOffCauses(o.Pacemaker)
	guest := o.GuestReason()
	restore, restoreErr := o.Restore()
	if restore != nil {
		// The restore keeps etcd stopped until it gives it back: no administrator's setting.
		off = slices.DeleteFunc(off, func(c Cause) bool { return c.Kind == CauseDisabled && c.Subject == etcdClone(o.Pacemaker) })
	}
	var state State
	var line string
	switch {
	case guest != "":
		state, line = assessGuest(o, off)
	default:
		state, line = assess(o, off, restore, restoreErr)
	}
	return Assessment{State: state, Line: line, FailoverOff: off, Guest: guest, UncheckedBMC: o.UncheckedBMCs(), Restore: restore,
		SecondEtcd: secondEtcdLine(o.SecondEtcd)}
}

// secondEtcdLine says what the static pod guard refused, and what to do ("" for nothing). It
// changes no state: the manifest is out of the kubelet's folder, but whatever put it there (a
// stock restore script) may have changed more (the operator's manifest moved, the data dir).
func secondEtcdLine(refused []staticpod.Refused) string {
	if len(refused) == 0 {
		return ""
	}
	r := refused[len(refused)-1]
	more := ""
	if len(refused) > 1 {
		more = fmt.Sprintf(" (and %d before it)", len(refused)-1)
	}
	return fmt.Sprintf("SECOND ETCD REFUSED: %s, which runs an etcd container (%s), was moved out of the kubelet's folder to %s at %s%s: "+
		"beside Pacemaker's etcd it would serve a second copy of the data. A stock restore script (cluster-restore.sh, quorum-restore.sh) "+
		"writes such a pod: never run them on these nodes, `tnfctl restore` is the restore (runbooks.md#tnfsecondetcdrefused). "+
		"Once dealt with: `tnfctl static-pod-guard --forget`.", r.Manifest, r.Command, r.MovedTo, r.At.UTC().Format("2006-01-02 15:04:05"), more)
}

// layerEtcdAgent is the layer's etcd agent.
const layerEtcdAgent = "ocf:tnf:etcd"

// etcdClone is the clone of the layer's etcd resource ("" when Pacemaker shows none).
func etcdClone(p *pcmk.Status) string {
	if p != nil {
		for _, r := range p.Resources {
			if r.Agent == layerEtcdAgent && r.Clone != "" {
				return r.Clone
			}
		}
	}
	return ""
}

// restoreSteps say what each step of a restore does, for its line.
var restoreSteps = map[string]string{
	etcdnode.RestoreStopping:  "etcd is being stopped on both nodes",
	etcdnode.RestoreRestoring: "the snapshot is being restored on %s",
	etcdnode.RestoreStarting:  "etcd is given back to Pacemaker: %s serves the restored cluster, then its peer joins it",
	etcdnode.RestoreHandover:  "the handover's conditions are set again in the Etcd object the snapshot brought back",
}

// restoringLine is the line of a restore under way.
func restoringLine(r *etcdnode.Restore) string {
	step := restoreSteps[r.Step]
	if strings.Contains(step, "%s") {
		step = fmt.Sprintf(step, r.Node)
	}
	if step == "" {
		step = "step " + r.Step
	}
	waiting := ""
	if r.Waiting != "" {
		waiting = " (waiting: " + r.Waiting + ")"
	}
	return fmt.Sprintf("RESTORING: `tnfctl restore` on %s replaces etcd's data by snapshot %s: %s since %s%s. "+
		"If it stopped, run it again on %s with the same snapshot: it resumes.", r.Node, r.SnapshotID(), step,
		r.Since.UTC().Format("15:04:05"), waiting, r.Node)
}

// advice is what a line tells to do where the guest's differs from the layer's own cluster.
type advice struct {
	idle string // what does not run on a node that waits for its peer
	// confirm is the way to declare a peer off for good: inert, while the node waits for it
	// to join; else once its fencing fails.
	confirm func(peer string, inert bool) string
}

// assessPeer reads what the guest and the layer's own cluster share: what does not answer, and a
// peer not proven off. ok is false when none of these holds.
func assessPeer(o Observation, a advice) (state State, line string, ok bool) {
	switch {
	case o.Corosync == nil:
		return CorosyncDown, "COROSYNC NOT ANSWERING on this node (see Corosync below): nothing of the cluster runs here. " +
			"`systemctl status corosync`; `tnfctl gather` for support.", true
	case o.Pacemaker == nil:
		return PacemakerDown, "PACEMAKER NOT ANSWERING on this node: `systemctl status pacemaker`; `tnfctl gather` for support.", true
	}
	peer := absentPeer(o.Corosync)
	switch {
	case o.Corosync.WaitingForAll && !o.Corosync.Quorate:
		return Inert, fmt.Sprintf("INERT: waits for %s to join; no %s here. If %s is off for good: %s.", peer, a.idle, peer, a.confirm(peer, true)), true
	case o.FencingFails:
		return Blocked, fmt.Sprintf("BLOCKED: the fencing of %s fails, so etcd waits (see Fencing below). If %s is powered off: %s.", peer, peer, a.confirm(peer, false)), true
	}
	// A peer Pacemaker holds unclean is not proven off: etcd runs without a leader, whatever its
	// role says, until a fencing completes, and one may not have been tried yet (the fencing
	// waits for the transition that schedules it, and a busy node's transitions take time).
	for _, n := range o.Pacemaker.Nodes {
		if n.Unclean && !o.Corosync.Nodes[n.Name] {
			return Blocked, fmt.Sprintf("BLOCKED: %s is not fenced yet, so etcd waits. If %s is powered off: %s.", n.Name, n.Name, a.confirm(n.Name, false)), true
		}
	}
	return "", "", false
}

// failoverOffLine is the line for an administrator's settings, which explain what is left (a
// node in standby serves nothing, a disabled etcd no voter): saying "recovering" would send the
// reader to wait for what never comes.
func failoverOffLine(off []Cause) string {
	undo := make([]string, len(off))
	for i, c := range off {
		undo[i] = "`" + c.Undo + "`"
	}
	return fmt.Sprintf("NO FAILOVER: %s (see Failover below); Pacemaker recovers no fault it covers. When the work is done: %s.",
		off[0], strings.Join(undo, ", "))
}

// absentPeer names the one node Corosync knows and does not show joined, or "the peer".
func absentPeer(c *pcmk.Membership) string {
	if absent := absentNodes(c); len(absent) == 1 {
		return absent[0]
	}
	return "the peer"
}

// absentNodes are the nodes Corosync knows and does not show joined, sorted.
func absentNodes(c *pcmk.Membership) []string {
	var absent []string
	for n, joined := range c.Nodes {
		if !joined {
			absent = append(absent, n)
		}
	}
	slices.Sort(absent)
	return absent
}

// assessGuest reads a cluster the operator configured: etcd through podman-etcd, whose clone has
// no promoted role, so a voter is a started instance whose node its learner_node property does
// not name; its claims (force_new_cluster, learner_node, standalone_node) say what it is doing.
// For a peer that is off, the advice is the layer's confirm-peer-down, which needs no API and
// shows what the peer's BMC says first; Pacemaker's own command, which the field's procedures
// run through the API (oc debug), is named beside it.
func assessGuest(o Observation, off []Cause) (State, string) {
	a := advice{idle: "kubelet or etcd", confirm: func(peer string, inert bool) string {
		if inert {
			return "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs quorum unblock`)"
		}
		return "`tnfctl confirm-peer-down` (Pacemaker's own: `pcs stonith confirm " + peer + "`)"
	}}
	if state, line, ok := assessPeer(o, a); ok {
		return state, line
	}
	if len(off) > 0 {
		return FailoverOff, failoverOffLine(off)
	}
	if o.Configuration == nil {
		return Recovering, "RECOVERING: the CIB's configuration did not answer, so whether an etcd member is a learner cannot be told. Look again in a minute."
	}
	props := o.Configuration.Properties
	var voters []string
	for _, r := range o.Pacemaker.Resources {
		if o.Corosync.Nodes[r.Node] && GuestVoter(r, props) {
			voters = append(voters, r.Node)
		}
	}
	slices.Sort(voters)
	absent := absentNodes(o.Corosync)
	var forcing []string
	for _, n := range o.Pacemaker.Nodes {
		if n.Attributes[AttrForceNewCluster] != "" {
			forcing = append(forcing, n.Name)
		}
	}
	switch {
	case len(forcing) > 0:
		return Recovering, fmt.Sprintf("RECOVERING: etcd on %s forces a new cluster (podman-etcd's %s); Pacemaker is acting. Look again in a minute.",
			strings.Join(forcing, " and "), AttrForceNewCluster)
	case props[PropLearnerNode] != "":
		return Recovering, fmt.Sprintf("RECOVERING: etcd on %s rejoins as a learner (podman-etcd's %s); it is promoted once it has caught up. Look again in a minute.",
			props[PropLearnerNode], PropLearnerNode)
	case len(absent) == 0 && len(voters) == 2:
		return Healthy, "HEALTHY: both nodes serve; etcd has two voters."
	case len(absent) == 1 && len(voters) == 1:
		return Degraded, fmt.Sprintf("DEGRADED: %s serves alone; %s is away. Power it on or repair it: it rejoins by itself.", voters[0], absent[0])
	case props[PropStandaloneNode] != "":
		return Recovering, fmt.Sprintf("RECOVERING: etcd on %s serves as a cluster of one (podman-etcd's %s); its peer is not a voter yet. Look again in a minute.",
			props[PropStandaloneNode], PropStandaloneNode)
	}
	return Recovering, fmt.Sprintf("RECOVERING: etcd serves on %d of %d nodes; Pacemaker is acting (see Resources). Look again in a minute.",
		len(voters), len(o.Corosync.Nodes))
}

func assess(o Observation, off []Cause, restore *etcdnode.Restore, restoreErr error) (State, string) {
	if o.SetupState == nodesetup.StateFailed && !o.SetUpBefore {
		return SetupFailed, "SETUP FAILED on this node (see Setup below); fix what it names, then `tnfctl setup` runs it again."
	}
	if c := o.Corosync; c != nil && o.Pacemaker != nil && c.WaitingForAll && !c.Quorate && o.InstallerKubelet {
		peer := absentPeer(c)
		return InstallerEtcd, fmt.Sprintf("INSTALLER'S ETCD: waits for %s to join; meanwhile cri-o and kubelet run the installer's etcd here, "+
			"as before the layer, until the handover. Do not confirm %s down: its etcd is the installer's other member.", peer, peer)
	}
	a := advice{idle: "cri-o, kubelet or etcd", confirm: func(string, bool) string { return "`tnfctl confirm-peer-down`" }}
	if state, line, ok := assessPeer(o, a); ok {
		return state, line
	}
	switch {
	case restoreErr != nil:
		return Restoring, fmt.Sprintf("RESTORING, but its record cannot be read (%v): `crm_attribute --type crm_config --name %s --query`.", restoreErr, etcdnode.PropRestore)
	case restore != nil:
		return Restoring, restoringLine(restore)
	}
	var members []string
	for n, joined := range o.Corosync.Nodes {
		if joined {
			members = append(members, n)
		}
	}
	absent, peer := absentNodes(o.Corosync), absentPeer(o.Corosync)
	for _, n := range o.Pacemaker.Nodes {
		switch why := n.Attributes[etcdnode.AttrDecision]; {
		case strings.Contains(why, decision.ServedWithoutData):
			return Blocked, "BLOCKED: neither node has etcd data, but this cluster served a cluster (see below). Mount the data disks; " +
				"if the data is gone for good: `tnfctl start-empty` (gives up everything it held)."
		case strings.Contains(why, decision.EtcdTooOld):
			return Blocked, fmt.Sprintf("BLOCKED: etcd on %s is older than the cluster's, which it cannot join (see below). "+
				"Update %s's layer (MCO's rollout does, in an update); never give data up for this.", n.Name, n.Name)
		case strings.Contains(why, contract.UnreadableReason):
			return Blocked, fmt.Sprintf("BLOCKED: etcd on %s cannot read what %s publishes: their layers are more than one contract apart (see below). "+
				"Update the older node's layer; with the API down, by hand (docs/operate.md#two-layers-too-far-apart).", n.Name, peer)
		case strings.HasPrefix(why, "refuse"):
			return Blocked, fmt.Sprintf("BLOCKED: etcd on %s refuses its data (see below). Bring %s back; if it is gone for good: `tnfctl accept-data-loss` (gives up its newer writes).", n.Name, peer)
		}
	}
	if len(off) > 0 {
		return FailoverOff, failoverOffLine(off)
	}
	var voters []string
	for _, r := range o.Pacemaker.Resources {
		if r.Agent == layerEtcdAgent && r.Role == "Promoted" && o.Corosync.Nodes[r.Node] {
			voters = append(voters, r.Node)
		}
	}
	switch {
	case len(absent) == 0 && len(voters) == 2:
		return Healthy, "HEALTHY: both nodes serve; etcd has two voters."
	case len(absent) == 1 && len(voters) == 1:
		return Degraded, fmt.Sprintf("DEGRADED: %s serves alone; %s is away. Power it on or repair it: it rejoins by itself.", voters[0], peer)
	}
	// Until its handover starts, the installer's etcd serves here and the agent's etcd waits
	// for it: nothing is recovering.
	if o.InstallerKubelet && o.Handover == nil {
		return InstallerEtcd, fmt.Sprintf("INSTALLER'S ETCD: cri-o and kubelet run the installer's etcd here, as before the layer, until "+
			"the handover (tnf-handover.service) moves etcd into Pacemaker; the agent's etcd waits for it. The agent's etcd serves on %d of %d members.",
			len(voters), len(members))
	}
	if h := o.Handover; h != nil {
		return Recovering, fmt.Sprintf("RECOVERING: etcd is being handed over from the installer's static pod; this node waits for %s (see Handover). "+
			"The agent's etcd serves on %d of %d members.", h.Step, len(voters), len(members))
	}
	return Recovering, fmt.Sprintf("RECOVERING: etcd serves on %d of %d members; Pacemaker is acting (see Resources). Look again in a minute.", len(voters), len(members))
}
