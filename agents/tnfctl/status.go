package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/semver"

	"github.com/tnf-layer/tnf-layer/internal/base/output"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencedrill"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencewait"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// clusterStatus is what tnfctl status shows.
type clusterStatus struct {
	// State and Summary are health.Assess's: where the cluster stands, and what to do next;
	// FailoverOff, what keeps Pacemaker from failing over.
	State       health.State   `json:"state"`
	Summary     string         `json:"summary"`
	FailoverOff []health.Cause `json:"failoverOff,omitempty"`
	// Guest says why the cluster-etcd-operator's configuration runs Pacemaker here, which the
	// layer only watches ("" on the layer's own cluster).
	Guest string `json:"guest,omitempty"`
	// UncheckedBMC are the fence devices that take any certificate from their BMC.
	UncheckedBMC []string `json:"uncheckedBMC,omitempty"`
	// Self is the node status runs on (--node, else the host name).
	Self          string          `json:"self,omitempty"`
	Corosync      pcmk.Membership `json:"corosync"`
	CorosyncError string          `json:"corosyncError,omitempty"`
	Pacemaker     *pcmk.Status    `json:"pacemaker,omitempty"`
	Error         string          `json:"pacemakerError,omitempty"`
	// Configuration is the CIB's cluster properties and fence devices (no parameter values);
	// ConfigurationError why it could not be read (then no device is known to be checked).
	Configuration      *pcmk.Configuration `json:"configuration,omitempty"`
	ConfigurationError string              `json:"configurationError,omitempty"`
	// FencingFails is set while the fencing of the absent peer keeps failing.
	FencingFails *fencingFails `json:"fencingFails,omitempty"`
	Setup        setupStatus   `json:"setup"`
	// Handover is where this node's handover from the installer's etcd stands, while it is not
	// done (tnf-handover.service).
	Handover *handover.State `json:"handover,omitempty"`
	// InstallerKubelet says cri-o and kubelet started at boot to run the installer's etcd, until
	// the handover here (tnf-installer-kubelet.service).
	InstallerKubelet bool `json:"installerKubelet,omitempty"`
	// Restore is the restore from a snapshot under way (tnfctl restore), on either node.
	Restore *etcdnode.Restore `json:"restore,omitempty"`
	// SecondEtcd are the manifests with an etcd container the static pod guard took out of the
	// kubelet's folder here; SecondEtcdSummary says so, and what to do.
	SecondEtcd        []staticpod.Refused `json:"secondEtcd,omitempty"`
	SecondEtcdSummary string              `json:"secondEtcdSummary,omitempty"`
	// FenceProven is when each node's fencing last succeeded (fencedrill.Proven), by node; a
	// node whose fencing was never proven is left out. FenceDue are the nodes whose fencing a
	// drill should prove: never proven, or not for fencedrill.MaxAge (none on a guest).
	FenceProven map[string]time.Time `json:"fenceProven,omitempty"`
	FenceDue    []string             `json:"fenceDue,omitempty"`
}

// setupStatus is where tnfctl setup stands on this node (nodesetup.State).
type setupStatus struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// DoneBefore: a setup completed here once; a failed later run leaves the node serving.
	DoneBefore bool `json:"doneBefore,omitempty"`
}

// fencingFails is a failing fencing, what the peer's BMC answers now, and the advice.
type fencingFails struct {
	fencewait.Failing
	BMC    string `json:"bmc,omitempty"`
	Advice string `json:"advice"`
}

// bmcReadTimeout bounds status's read of a BMC: long enough for a slow BMC, short for a person.
const bmcReadTimeout = 5 * time.Second

// peerFencingFails looks, when the peer is absent, for its fencing failing in the history, and
// then asks the peer's BMC what it says now. Without the node configuration (tnfctl status on a
// machine set up by hand) the BMC is not asked.
func peerFencingFails(ctx context.Context, nf *nodeFlags, st clusterStatus) *fencingFails {
	nc, err := nf.load()
	peer := nc.Peer
	if err != nil || st.Pacemaker == nil || st.Corosync.Nodes[peer.Name] {
		return nil
	}
	f, ok := fencewait.Find(*st.Pacemaker, peer.Name)
	if !ok {
		return nil
	}
	ff := &fencingFails{Failing: f, BMC: peerPower(ctx, peer)}
	ff.Advice = f.Describe(ff.BMC)
	return ff
}

// peerPower is what the peer's BMC says about its power now, for a person deciding what to do.
func peerPower(ctx context.Context, peer clusterconfig.Node) string {
	cred, err := peer.Credential()
	if err != nil {
		return "its BMC was not asked: " + err.Error()
	}
	return bmc.ReadPower(ctx, cred, bmc.Options{Timeout: bmcReadTimeout, UserAgent: "tnfctl"}).Describe(cred.Address.Host)
}

// readStatus reads what tnfctl status shows, whatever answers.
func readStatus(ctx context.Context, nf *nodeFlags) clusterStatus {
	tools := pcmk.Tools{}
	var st clusterStatus
	local := observeLocal()
	st.Setup.State, st.Setup.Reason = nodesetup.State()
	st.Setup.DoneBefore = local.SetUpBefore
	st.Self, _ = nf.name() // without a name, no node is marked as this one
	st.Handover, st.InstallerKubelet, st.SecondEtcd = local.Handover, local.InstallerKubelet, local.SecondEtcd
	var err error
	if st.Corosync, err = tools.Members(ctx); err != nil {
		st.CorosyncError = err.Error()
	} else if p, err := tools.Status(ctx); err != nil {
		st.Error = err.Error()
	} else {
		st.Pacemaker = &p
		if c, err := tools.Configuration(ctx); err != nil {
			st.ConfigurationError = err.Error()
		} else {
			st.Configuration = &c
		}
	}
	st.FencingFails = peerFencingFails(ctx, nf, st)
	st.assess(time.Now())
	return st
}

// assess fills in the state from what was read, and the fencing's proofs as of now.
func (st *clusterStatus) assess(now time.Time) {
	var c *pcmk.Membership
	if st.CorosyncError == "" {
		c = &st.Corosync
	}
	a := health.Assess(health.Observation{Corosync: c, Pacemaker: st.Pacemaker, SetupState: st.Setup.State, SetupReason: st.Setup.Reason,
		SetUpBefore: st.Setup.DoneBefore, FencingFails: health.FencingFails(c, st.Pacemaker), Handover: st.Handover,
		InstallerKubelet: st.InstallerKubelet, Configuration: st.Configuration, SecondEtcd: st.SecondEtcd})
	st.State, st.Summary, st.FailoverOff, st.Guest, st.UncheckedBMC, st.Restore = a.State, a.Line, a.FailoverOff, a.Guest, a.UncheckedBMC, a.Restore
	st.SecondEtcdSummary = a.SecondEtcd
	st.FenceProven, st.FenceDue = nil, nil
	for _, n := range nodesOf(st.Pacemaker) {
		at, ok := fencedrill.Proven(*st.Pacemaker, st.Configuration, n.Name)
		if ok {
			if st.FenceProven == nil {
				st.FenceProven = map[string]time.Time{}
			}
			st.FenceProven[n.Name] = at
		}
		if st.Guest == "" && (!ok || now.Sub(at) > fencedrill.MaxAge) {
			st.FenceDue = append(st.FenceDue, n.Name)
		}
	}
}

// nodesOf is the nodes Pacemaker shows (none when it did not answer).
func nodesOf(p *pcmk.Status) []pcmk.NodeStatus {
	if p == nil {
		return nil
	}
	return p.Nodes
}

// observeLocal is what this node's own files say, for health.Assess: whether a setup completed
// here once, the handover while it is not done, and whether cri-o and kubelet run the
// installer's etcd here. The caller, which reads setup's state with its reason, adds them.
func observeLocal() health.Observation {
	var o health.Observation
	o.SetUpBefore = nodesetup.SetUpBefore()
	_, err := os.Stat(staticpod.KubeletMarker)
	o.InstallerKubelet = err == nil
	if st, ok, err := handover.ReadState(handover.StateFile); err != nil {
		o.Handover = &handover.State{Waiting: err.Error()}
	} else if ok && !st.Done() {
		o.Handover = &st
	}
	if refused, err := staticpod.ReadRefused(staticpod.RefusedFile); err != nil {
		o.SecondEtcd = []staticpod.Refused{{Manifest: "(the record cannot be read)", Command: err.Error()}}
	} else {
		o.SecondEtcd = refused
	}
	return o
}

func statusCommand(nf *nodeFlags) *cobra.Command {
	var (
		format string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Membership, quorum and wait-for-all, each resource's role per node, the fencing history",
		Long: "The first line says where the cluster stands and what to do next (-o json: state and summary), in every " +
			"format and whatever answers: " + stateList() + ". failover-off: both nodes may serve, but an administrator's " +
			"setting (maintenance mode, fencing disabled, a node in standby or maintenance, a resource unmanaged or " +
			"disabled) keeps Pacemaker from recovering a fault; each such setting is listed with the command that undoes " +
			"it (-o json: failoverOff). Then Corosync's " +
			"membership as this node sees it, quorum, each node in Pacemaker (this node marked) with its layer version and the version of the settings its last setup applied (the same on both nodes when they run the same /etc/tnf) and the Corosync settings its Corosync does not run yet, why its etcd " +
			"agent waits or refuses and what runs on it, what runs on no node, and the newest fencing events (times in UTC), after the " +
			"fence devices that take any certificate from their BMC (ssl_insecure; -o json: uncheckedBMC). On a guest (a node whose " +
			"Pacemaker the cluster-etcd-operator configured, which the layer only watches) a Mode line says so (-o json: guest), " +
			"and the state reads etcd as podman-etcd runs it, with its claims (force_new_cluster, learner_node, standalone_node). Exit code: 0 " +
			"healthy, 4 degraded, recovering or installer-etcd, 6 failover-off, 5 not serving (any other state), 1 when the " +
			"output could not be written.",
		Example: `  tnfctl status
  tnfctl status -o json | jq -r .state`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				format = "json"
			}
			st := readStatus(cmd.Context(), nf)
			if err := output.Print(cmd.OutOrStdout(), format, st, func(w io.Writer) { printStatus(w, st) }); err != nil {
				return err
			}
			if code := st.State.ExitCode(); code != 0 {
				return stateExit(code)
			}
			return nil
		},
	}
	output.Flag(cmd.Flags(), &format)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	if err := cmd.Flags().MarkDeprecated("json", "use -o json"); err != nil {
		panic(err)
	}
	return cmd
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func printStatus(w io.Writer, st clusterStatus) {
	fmt.Fprintln(w, st.Summary)
	if st.SecondEtcdSummary != "" {
		fmt.Fprintln(w, st.SecondEtcdSummary)
	}
	if st.Guest != "" {
		fmt.Fprintf(w, "Mode:      guest: Pacemaker is configured by the cluster-etcd-operator; the layer watches it and writes none of it\n"+
			"           (%s)\n", st.Guest)
	}
	if st.CorosyncError != "" {
		printSetup(w, st.Setup)
		fmt.Fprintf(w, "Corosync:  %s\n", st.CorosyncError)
		return
	}
	var names []string
	for n := range st.Corosync.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	var members []string
	for _, n := range names {
		state := "member"
		if !st.Corosync.Nodes[n] {
			state = "absent"
		}
		members = append(members, n+" "+state)
	}
	fmt.Fprintf(w, "Corosync:  %s\n", strings.Join(members, ", "))
	fmt.Fprintf(w, "Quorum:    quorate %s, waiting for all nodes %s\n", yesNo(st.Corosync.Quorate), yesNo(st.Corosync.WaitingForAll))
	printSetup(w, st.Setup)
	if h := st.Handover; h != nil {
		fmt.Fprintf(w, "Handover:  waiting for %s since %s: %s (tnf-handover.service)\n", orNone(h.Step), fencewait.Stamp(h.Since), h.Waiting)
	}
	if r := st.Restore; r != nil {
		fmt.Fprintf(w, "Restore:   on %s since %s, step %s since %s; restored cluster %s, revisions from %d", r.Node, fencewait.Stamp(r.Began),
			r.Step, fencewait.Stamp(r.Since), r.Cluster, r.FirstRevision())
		if r.GaveUp != "" {
			fmt.Fprintf(w, ", giving up cluster %s", r.GaveUp)
		}
		fmt.Fprintln(w)
	}
	if st.Pacemaker == nil {
		fmt.Fprintf(w, "Pacemaker: %s\n", st.Error)
		return
	}
	if len(st.FailoverOff) > 0 {
		fmt.Fprintln(w, "Failover:  OFF")
		for _, c := range st.FailoverOff {
			fmt.Fprintf(w, "  %s (undo: %s)\n", c, c.Undo)
		}
	}
	p := st.Pacemaker
	fmt.Fprintf(w, "Pacemaker: DC %s, with quorum %s\n", orNone(p.DC), yesNo(p.WithQuorum))
	// Each node with what runs on it, this node marked; instances placed nowhere after them.
	for _, n := range p.Nodes {
		state := "online"
		switch {
		case n.Unclean:
			state = "UNCLEAN"
		case n.Pending:
			state = "pending"
		case !n.Online:
			state = "offline"
		}
		name := n.Name
		if name == st.Self {
			name += " (this node)"
		}
		versions := ""
		if v := n.Attributes[etcdnode.AttrEtcdVersion]; v != "" {
			versions = ", etcd " + v
		}
		if v := n.Attributes[nodesetup.AttrSettings]; v != "" {
			versions += ", settings " + v
		}
		fmt.Fprintf(w, "Node %-24s %-8s layer %s%s\n", name, state, orNone(n.Attributes[etcdnode.AttrLayerVersion]), versions)
		if v := n.Attributes[nodesetup.AttrCorosyncReload]; v != "" {
			fmt.Fprintf(w, "  corosync on %s: %s: not running yet, waits for a reload (tnfctl setup on either node once both have the same corosync.conf and neither waits for a restart)\n", n.Name, v)
		}
		if v := n.Attributes[nodesetup.AttrCorosyncRestart]; v != "" {
			fmt.Fprintf(w, "  corosync on %s: %s: not running yet, read at Corosync's next start (reboot %s)\n", n.Name, v, n.Name)
		}
		if d := n.Attributes[etcdnode.AttrDecision]; d != "" {
			fmt.Fprintf(w, "  etcd on %s: %s\n", n.Name, d)
		}
		if t, err := etcdnode.ParseTally(etcdnode.AttrCopiesDropped, n.Attributes[etcdnode.AttrCopiesDropped]); err == nil && t.Count > 0 {
			fmt.Fprintf(w, "  etcd on %s: %d moved-aside data dirs deleted early to make room for the peer's data (the last at %s): "+
				"the data dir's disk cannot keep backup_count copies\n", n.Name, t.Count, fencewait.Stamp(t.Last))
		}
		for _, r := range p.Resources {
			if r.Node == n.Name {
				fmt.Fprintf(w, "  %-24s %s%s\n", r.ID, r.Role, failedMark(r))
			}
		}
	}
	if claims := guestClaims(st); claims != "" {
		fmt.Fprintf(w, "podman-etcd: %s\n", claims)
	}
	if warning := etcdUpgradeWarning(p.Nodes); warning != "" {
		fmt.Fprintf(w, "Upgrade:   %s\n", warning)
	}
	var unplaced []string
	for _, r := range p.Resources {
		if r.Node == "" {
			unplaced = append(unplaced, r.ID+" "+r.Role+failedMark(r))
		}
	}
	if len(unplaced) > 0 {
		fmt.Fprintf(w, "Not on a node: %s\n", strings.Join(unplaced, ", "))
	}
	fmt.Fprintln(w, "Fencing:")
	if st.FencingFails != nil {
		fmt.Fprintf(w, "  FAILING: %s\n", st.FencingFails.Advice)
	}
	if st.ConfigurationError != "" {
		fmt.Fprintf(w, "  the CIB's configuration did not answer, so which devices check their BMC's certificate is not known: %s\n", st.ConfigurationError)
	}
	for _, d := range st.UncheckedBMC {
		fmt.Fprintf(w, "  UNCHECKED: %s takes any certificate from its BMC (ssl_insecure): %s\n", d, uncheckedAdvice(d, st.Guest != ""))
	}
	if len(p.Fencing) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for i, f := range p.Fencing {
		if i == shownFenceEvents {
			fmt.Fprintf(w, "  (%d earlier: tnfctl status -o json)\n", len(p.Fencing)-i)
			break
		}
		reason := ""
		if f.ExitReason != "" {
			reason = " (" + f.ExitReason + ")"
		}
		fmt.Fprintf(w, "  %s of %s by %s: %s%s %s\n", f.Action, f.Target, orNone(f.Delegate), f.Status, reason, eventTime(f))
	}
	if proofs := fenceProofs(st); proofs != "" {
		fmt.Fprintf(w, "  proven: %s\n", proofs)
	}
}

// fenceProofs says, for each node, when its fencing was last proven (a drill, or a real fault's
// fencing) and, where a drill is due, on which node it runs.
func fenceProofs(st clusterStatus) string {
	var out []string
	for _, n := range st.Pacemaker.Nodes {
		line := n.Name + " never"
		if at, ok := st.FenceProven[n.Name]; ok {
			line = n.Name + " at " + fencewait.Stamp(at)
		}
		if by := st.Pacemaker.Peer(n.Name).Name; by != "" && slices.Contains(st.FenceDue, n.Name) {
			line += fmt.Sprintf(" (due: tnfctl fence-drill on %s)", by)
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// guestClaims are podman-etcd's claims on a guest, which say where its etcd stands ("" when
// none is set).
func guestClaims(st clusterStatus) string {
	if st.Guest == "" || st.Pacemaker == nil {
		return ""
	}
	var claims []string
	for _, n := range st.Pacemaker.Nodes {
		if v := n.Attributes[health.AttrForceNewCluster]; v != "" {
			claims = append(claims, fmt.Sprintf("%s on %s", health.AttrForceNewCluster, n.Name))
		}
	}
	if st.Configuration != nil {
		for _, name := range []string{health.PropLearnerNode, health.PropStandaloneNode} {
			if v := st.Configuration.Properties[name]; v != "" {
				claims = append(claims, name+" "+v)
			}
		}
	}
	return strings.Join(claims, ", ")
}

// uncheckedAdvice is how to make device check its BMC's certificate. A guest's devices are the
// operator's, made from each node's fencing Secret (fencing-credentials-<node>, the device
// <node>_redfish): the layer may not change them, its jobs would put them back.
func uncheckedAdvice(device string, guest bool) string {
	const proof = "once the BMC shows a certificate the node trusts (docs/runbooks.md#tnffencedeviceunchecked)"
	if !guest {
		return "the layer's devices check their BMC: `pcs stonith update " + device + " ssl_insecure=0` " + proof + ", or delete the device"
	}
	secret := "the node's fencing Secret in openshift-etcd"
	if node, ok := strings.CutSuffix(device, "_redfish"); ok {
		secret = "openshift-etcd/fencing-credentials-" + node
	}
	return "set certificateVerification: Enabled in " + secret + " " + proof + "; the operator's fencing job updates the device"
}

// printSetup prints a failed setup's reason.
func printSetup(w io.Writer, s setupStatus) {
	switch {
	case s.State == nodesetup.StateFailed && s.DoneBefore:
		fmt.Fprintf(w, "Setup:     FAILED: %s (this node keeps the settings of its last completed run; tnfctl setup runs it again)\n", s.Reason)
	case s.State == nodesetup.StateFailed:
		fmt.Fprintf(w, "Setup:     FAILED: %s (tnf-setup.service retries; tnfctl setup runs it now)\n", s.Reason)
	}
}

func failedMark(r pcmk.ResourceRole) string {
	if r.Failed {
		return " FAILED"
	}
	return ""
}

// eventTime is when a fencing completed, in the one format status prints times in (UTC);
// crm_mon's own text when it cannot be read.
func eventTime(f pcmk.FenceEvent) string {
	if t, ok := f.CompletedAt(); ok {
		return fencewait.Stamp(t)
	}
	return f.Completed
}

// shownFenceEvents is how many of the newest fencing events the text view lists: enough to
// see an incident's fencing, short enough to keep the view on one screen.
const shownFenceEvents = 5

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// etcdBefore36 is the 3.5 patch release etcd's upgrade guide asks every 3.5 member to run before
// any member runs 3.6 (https://etcd.io/docs/v3.6/upgrades/upgrade_3_6/: 3.5.24 to 3.5.26 fix
// upgrade blockers in how members are recorded, and this layer adds and removes members on every
// failover).
const etcdBefore36 = "3.5.26"

// etcdUpgradeWarning names a node whose etcd 3.5 is older than etcdBefore36 beside a node that
// runs 3.6 or later, from the versions the agents published; "" when there is none. The agents
// go on (refusing would leave one voter for the rest of the update): the update of that node's
// layer is what ends it.
func etcdUpgradeWarning(nodes []pcmk.NodeStatus) string {
	var old, newer []string
	for _, n := range nodes {
		v := "v" + strings.TrimPrefix(n.Attributes[etcdnode.AttrEtcdVersion], "v")
		switch {
		case !semver.IsValid(v):
		case semver.MajorMinor(v) == "v3.5" && semver.Compare(v, "v"+etcdBefore36) < 0:
			old = append(old, fmt.Sprintf("%s on %s", v[1:], n.Name))
		case semver.Compare(semver.MajorMinor(v), "v3.6") >= 0:
			newer = append(newer, fmt.Sprintf("%s on %s", v[1:], n.Name))
		}
	}
	if len(old) == 0 || len(newer) == 0 {
		return ""
	}
	return fmt.Sprintf("etcd %s beside %s: etcd's upgrade guide asks every 3.5 member to run %s or later before any runs 3.6; "+
		"update the 3.5 node's layer next, and change no member by hand meanwhile",
		strings.Join(old, ", "), strings.Join(newer, ", "), etcdBefore36)
}

// stateList is the states, for the help.
func stateList() string {
	names := make([]string, len(health.States))
	for i, s := range health.States {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
