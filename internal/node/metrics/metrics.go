// Package metrics is what a node's metrics endpoint serves: Pacemaker's and Corosync's state
// under the names and labels of ClusterLabs' ha_cluster_exporter (so that dashboards and alerts
// written for it work), and the layer's own state prefixed tnf_. It turns one reading of the
// sources tnfctl status reads into metrics; reading them is the caller's (the collector's).
package metrics

import (
	"bytes"
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencedrill"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencewait"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

// Port is the port tnf-metrics.service serves on, next to ha_cluster_exporter's 9664 so that both
// can run side by side.
const Port = 9665

// The endpoint's serving certificate: OpenShift's service-ca operator issues it into the Secret
// TLSSecret (kubernetes.io/tls, for the Service's name tnf-metrics.openshift-etcd.svc), and the
// node, which is no pod to mount it, gets it through the API into two root-only files.
const (
	TLSSecret   = clusterconfig.MetricsTLSSecret
	TLSCertFile = clusterconfig.MetricsTLSCertFile
	TLSKeyFile  = clusterconfig.MetricsTLSKeyFile
)

// Reading is one look at the node's state.
type Reading struct {
	Corosync  *pcmk.Membership // nil when Corosync does not answer
	Links     []pcmk.Link      // nil when corosync-cfgtool does not answer
	Pacemaker *pcmk.Status     // nil when Pacemaker does not answer
	// Configuration is the CIB's configuration (nil when it does not answer): podman-etcd's
	// cluster properties on a guest, the fence devices.
	Configuration *pcmk.Configuration
	Setup         Setup // from nodesetup.State
	// AloneSince is when auto-unblock's timer first saw this node waiting alone (zero when it
	// does not wait); AutoUnblock counts its passes that asked the BMC, by outcome.
	AloneSince  time.Time
	AutoUnblock map[string]int
	Etcd        *EtcdMembers // nil when no etcd member answered
	Node        string       // this node
	Layer       string       // the layer version of this binary
	Release     string       // the OpenShift release the layer's OS was built on ("" for none)
	// Health is the state tnfctl status gives from this reading (health.Assess);
	// HandoverPending, whether etcd here is still the installer's or being handed over.
	Health          health.Assessment
	HandoverPending bool
	// SecondEtcd counts the manifests the static pod guard refused here (health.Observation's).
	SecondEtcd int
	// CredentialIssued and CredentialExpires bound the node's API token (zero without a token
	// that expires).
	CredentialIssued, CredentialExpires time.Time
	ReadSeconds                         float64
	// Readings counts the readings the endpoint has taken since it started (Shared).
	Readings uint64
}

// EtcdMembers counts etcd's members by kind, from its member list.
type EtcdMembers struct {
	Voters, Learners int
}

// Setup is where tnfctl setup stands on this node.
type Setup struct {
	State  string // one of nodesetup.States
	Reason string // why it failed
}

// The etcd agent's role on a node, as the tnf_etcd_role metric names it.
const (
	RoleVoter   = "voter"   // Promoted: a voting etcd member
	RoleLearner = "learner" // Unpromoted and joining: a learner catching up, or a voter not yet promoted
	RoleReady   = "ready"   // Unpromoted, waiting: the agent says why (tnf_etcd_decision_info)
	RoleStopped = "stopped"
)

// etcdResource is the etcd resource's id, as pcs-templates/cluster.pcs.tmpl creates it.
const etcdResource = "etcd"

var roles = []string{RoleVoter, RoleLearner, RoleReady, RoleStopped}

// ha_cluster_exporter's node and resource statuses: each gets its own series, 1 or 0.
var (
	nodeStatuses     = []string{"online", "standby", "standby_onfail", "maintenance", "pending", "unclean", "shutdown", "expected_up", "dc"}
	resourceStatuses = []string{"active", "orphaned", "blocked", "failed", "failure_ignored"}
	// quorumVoteTypes maps corosync-quorumtool's names to the exporter's type label.
	quorumVoteTypes = map[string]string{"Expected votes": "expected_votes", "Highest expected": "highest_expected", "Total votes": "total_votes", "Quorum": "quorum"}
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	// ha_cluster_exporter's names, labels and help.
	pcmkNodes              = desc("ha_cluster_pacemaker_nodes", "The status of each node in the cluster; 1 means the node is in that status, 0 otherwise", "node", "type", "status")
	pcmkResources          = desc("ha_cluster_pacemaker_resources", "The status of each resource in the cluster; 1 means the resource is in that status, 0 otherwise", "node", "resource", "role", "managed", "status", "agent", "group", "clone")
	pcmkStonithEnabled     = desc("ha_cluster_pacemaker_stonith_enabled", "Whether or not stonith is enabled")
	pcmkFailCount          = desc("ha_cluster_pacemaker_fail_count", "The Fail count number per node and resource id", "node", "resource")
	pcmkMigrationThreshold = desc("ha_cluster_pacemaker_migration_threshold", "The migration_threshold number per node and resource id", "node", "resource")
	corosyncQuorate        = desc("ha_cluster_corosync_quorate", "Whether or not the cluster is quorate")
	corosyncQuorumVotes    = desc("ha_cluster_corosync_quorum_votes", "Cluster quorum votes; one line per type", "type")
	corosyncRingErrors     = desc("ha_cluster_corosync_ring_errors", "The total number of faulty corosync rings")
	corosyncMemberVotes    = desc("ha_cluster_corosync_member_votes", "How many votes each member node has contributed with to the current quorum", "node_id", "node", "local")

	// The layer's own.
	up            = desc("tnf_up", "Whether each source answered this scrape (corosync, pacemaker, cib: the CIB's configuration, etcd)", "node", "source")
	etcdMembers   = desc("tnf_etcd_members", "etcd's members by type (voter, learner), from its member list", "type")
	layerInfo     = desc("tnf_layer_info", "The layer version of this node's metrics endpoint, and of each node's etcd agent as it published it", "node", "version")
	layerRelease  = desc("tnf_layer_release_info", "The OpenShift release this node's layer (its operating system) was built on, exact when build-layer read it from the release payload", "node", "release")
	etcdRole      = desc("tnf_etcd_role", "The etcd agent's role on each node (voter, learner, ready, stopped) as Pacemaker last knew it (an unclean node's is its last known); 1 for the node's role", "node", "role")
	etcdDecision  = desc("tnf_etcd_decision_info", "The etcd agent on the node neither leads nor joins, while it does not: decision is wait or refuse (tnfctl status says why)", "node", "decision")
	peerMember    = desc("tnf_cluster_member", "Whether each configured node is a Corosync member as this node sees it", "node")
	waitingForAll = desc("tnf_inert", "Whether this node boots inert: Corosync's wait_for_all holds quorum back until the peer is seen or an administrator confirms it down", "node")
	fencingEvents = desc("tnf_fencing_events_total", "Fencing operations in Pacemaker's fencing history by target, action and result (the count restarts when the history is cleaned)", "target", "action", "result")
	fencingFails  = desc("tnf_fencing_failing", "Whether the target, which Pacemaker holds unclean, has had its fencing fail since its last success", "target")
	fencingSince  = desc("tnf_fencing_failing_since_seconds", "When the fencing of the target first failed since its last success (Unix time)", "target")
	forced        = desc("tnf_etcd_forced_clusters_total", "Clusters of one the etcd agent on the node forced since the node booted (after its peer was fenced or confirmed down)", "node")
	copiesDropped = desc("tnf_etcd_copies_dropped_total", "Moved-aside etcd data dirs the agent on the node deleted since the node booted before backup_count asked, to make room for a new member's data", "node")
	failover      = desc("tnf_last_failover_seconds", "From the completion of the peer's last fencing to the node's forced cluster of one serving, for the node's last forced cluster", "node")
	aloneSince    = desc("tnf_waiting_alone_since_seconds", "When this node was first seen waiting alone (booted alone, or alone with the peer's fencing failing), Unix time; absent while it does not wait", "node")
	unblockPasses = desc("tnf_auto_unblock_decisions_total", "auto-unblock's passes that asked the peer's BMC since the node booted, by outcome (confirmed, refused)", "node", "outcome")
	setupState    = desc("tnf_setup_state", "Where tnfctl setup stands on this node (not_run, waiting_for_peer, failed, done, guest); 1 for the state", "node", "state")
	healthState   = desc("tnf_health_state", "Where the cluster stands as this node sees it, tnfctl status's state (healthy, degraded, failover-off, ...); 1 for the state", "node", "state")
	handover      = desc("tnf_handover_pending", "Whether etcd on this node is still the installer's, or being handed over to Pacemaker: the agent's etcd is not meant to serve here yet", "node")
	failoverOff   = desc("tnf_failover_off", "A setting that keeps Pacemaker from failing over (cause: maintenance-mode, fencing-disabled, node-standby, node-maintenance, unmanaged, disabled; subject: the node or resource); 1 while it is set", "cause", "subject")
	credIssued    = desc("tnf_node_credential_issued_timestamp_seconds", "When the node's API token (secretsFromAPI.kubeconfigFile) was issued, Unix time; absent without a token that expires", "node")
	credExpires   = desc("tnf_node_credential_expiry_timestamp_seconds", "When the node's API token expires, Unix time: the node renews it once half its lifetime has passed; absent without a token that expires", "node")
	guest         = desc("tnf_guest", "Whether the cluster-etcd-operator's configuration runs Pacemaker on this node, the layer only watching it (a guest)", "node")
	secondEtcd    = desc("tnf_second_etcd_refused", "Manifests with an etcd container the static pod guard took out of the kubelet's folder on this node (a second etcd beside Pacemaker's), until an administrator has read them", "node")
	uncheckedBMC  = desc("tnf_fence_device_unchecked", "A fence device that takes any certificate from its BMC (ssl_insecure): whoever answers at the BMC's address can fake a power-off; 1 while it is so", "device")
	fenceProven   = desc("tnf_fence_proven_timestamp_seconds", "When the fencing of the target last succeeded, by tnfctl fence-drill or in Pacemaker's fencing history (Unix time); 0 when it never did. Not on a guest", "target")
	readSeconds   = desc("tnf_scrape_duration_seconds", "How long reading Corosync and Pacemaker took for this scrape")
	readings      = desc("tnf_scrape_readings_total", "Readings of the node's state the endpoint has taken since it started: scrapes close together share one")
)

// Descs are every metric's descriptions.
func Descs() []*prometheus.Desc {
	return []*prometheus.Desc{pcmkNodes, pcmkResources, pcmkStonithEnabled, pcmkFailCount, pcmkMigrationThreshold,
		corosyncQuorate, corosyncQuorumVotes, corosyncRingErrors, corosyncMemberVotes,
		up, etcdMembers, layerInfo, layerRelease, etcdRole, etcdDecision, forced, copiesDropped, failover, peerMember, waitingForAll, fencingEvents, fencingFails, fencingSince, fenceProven,
		aloneSince, unblockPasses, setupState, healthState, handover, failoverOff, guest, secondEtcd, uncheckedBMC, credIssued, credExpires, readSeconds, readings}
}

// Metrics turns a reading into metrics.
func Metrics(r Reading) []prometheus.Metric {
	var out []prometheus.Metric
	add := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, t, v, labels...))
	}
	gauge := func(d *prometheus.Desc, v bool, labels ...string) { add(d, prometheus.GaugeValue, b2f(v), labels...) }

	gauge(up, r.Corosync != nil, r.Node, "corosync")
	gauge(up, r.Pacemaker != nil, r.Node, "pacemaker")
	gauge(up, r.Configuration != nil, r.Node, "cib")
	gauge(up, r.Etcd != nil, r.Node, "etcd")
	if r.Etcd != nil {
		add(etcdMembers, prometheus.GaugeValue, float64(r.Etcd.Voters), "voter")
		add(etcdMembers, prometheus.GaugeValue, float64(r.Etcd.Learners), "learner")
	}
	add(readSeconds, prometheus.GaugeValue, r.ReadSeconds)
	add(readings, prometheus.CounterValue, float64(r.Readings))
	add(layerInfo, prometheus.GaugeValue, 1, r.Node, r.Layer)
	if r.Release != "" {
		add(layerRelease, prometheus.GaugeValue, 1, r.Node, r.Release)
	}
	for _, s := range nodesetup.States {
		gauge(setupState, r.Setup.State == s, r.Node, s)
	}
	if !r.AloneSince.IsZero() {
		add(aloneSince, prometheus.GaugeValue, float64(r.AloneSince.Unix()), r.Node)
	}
	for _, st := range health.States {
		gauge(healthState, r.Health.State == st, r.Node, string(st))
	}
	gauge(handover, r.HandoverPending, r.Node)
	for _, c := range r.Health.FailoverOff {
		add(failoverOff, prometheus.GaugeValue, 1, c.Kind, c.Subject)
	}
	gauge(guest, r.Health.Guest != "", r.Node)
	add(secondEtcd, prometheus.GaugeValue, float64(r.SecondEtcd), r.Node)
	for _, d := range r.Health.UncheckedBMC {
		add(uncheckedBMC, prometheus.GaugeValue, 1, d)
	}
	if !r.CredentialExpires.IsZero() {
		add(credIssued, prometheus.GaugeValue, float64(r.CredentialIssued.Unix()), r.Node)
		add(credExpires, prometheus.GaugeValue, float64(r.CredentialExpires.Unix()), r.Node)
	}
	for _, o := range unblock.Outcomes {
		add(unblockPasses, prometheus.CounterValue, float64(r.AutoUnblock[o]), r.Node, o)
	}
	if c := r.Corosync; c != nil {
		gauge(corosyncQuorate, c.Quorate)
		gauge(waitingForAll, c.WaitingForAll, r.Node)
		for _, k := range slices.Sorted(maps.Keys(c.Votes)) {
			if t, ok := quorumVoteTypes[k]; ok {
				add(corosyncQuorumVotes, prometheus.GaugeValue, float64(c.Votes[k]), t)
			}
		}
		for _, m := range c.Members {
			add(corosyncMemberVotes, prometheus.GaugeValue, float64(m.Votes), m.ID, m.Name, strconv.FormatBool(m.Local))
		}
		for _, n := range slices.Sorted(maps.Keys(c.Nodes)) {
			gauge(peerMember, c.Nodes[n], n)
		}
	}
	// Corosync 3.1's knet links: ha_cluster_exporter 1.3.1 parses only Corosync 2's and 3.0's
	// listing, and reports 0 whatever the links do; this counts the links that lost a node.
	if r.Links != nil {
		faulty := 0
		for _, l := range r.Links {
			if l.Faulty {
				faulty++
			}
		}
		add(corosyncRingErrors, prometheus.GaugeValue, float64(faulty))
	}
	if p := r.Pacemaker; p != nil {
		out = append(out, pacemaker(p, r)...)
	}
	return out
}

func pacemaker(p *pcmk.Status, r Reading) []prometheus.Metric {
	var out []prometheus.Metric
	add := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, t, v, labels...))
	}
	gauge := func(d *prometheus.Desc, v bool, labels ...string) { add(d, prometheus.GaugeValue, b2f(v), labels...) }

	gauge(pcmkStonithEnabled, p.StonithEnabled)
	for _, n := range p.Nodes {
		flags := map[string]bool{"online": n.Online, "standby": n.Standby, "standby_onfail": n.StandbyOnFail,
			"maintenance": n.Maintenance, "pending": n.Pending, "unclean": n.Unclean, "shutdown": n.Shutdown,
			"expected_up": n.ExpectedUp, "dc": n.IsDC}
		for _, s := range nodeStatuses {
			gauge(pcmkNodes, flags[s], n.Name, n.Type, s)
		}
		layer, decision := n.Attributes[etcdnode.AttrLayerVersion], n.Attributes[etcdnode.AttrDecision]
		if layer != "" && n.Name != r.Node {
			add(layerInfo, prometheus.GaugeValue, 1, n.Name, layer)
		}
		role := etcdAgentRole(p.Role(etcdResource, n.Name), decision)
		if r.Health.Guest != "" {
			role = guestRole(p, n.Name, r.Configuration)
		}
		for _, rl := range roles {
			gauge(etcdRole, rl == role, n.Name, rl)
		}
		// The action only: the reason is prose, and a label of prose makes a series per wording.
		if action, _, _ := strings.Cut(decision, ":"); action == "wait" || action == "refuse" {
			add(etcdDecision, prometheus.GaugeValue, 1, n.Name, action)
		}
		// A count the agent did not write leaves the node without these two series; the rest of
		// the scrape stands.
		if f, err := etcdnode.ParseTally(etcdnode.AttrForced, n.Attributes[etcdnode.AttrForced]); err == nil {
			add(forced, prometheus.CounterValue, float64(f.Count), n.Name)
			if d, ok := lastFailover(p.Fencing, f, p.Peer(n.Name)); ok {
				add(failover, prometheus.GaugeValue, d.Seconds(), n.Name)
			}
		}
		if t, err := etcdnode.ParseTally(etcdnode.AttrCopiesDropped, n.Attributes[etcdnode.AttrCopiesDropped]); err == nil {
			add(copiesDropped, prometheus.CounterValue, float64(t.Count), n.Name)
		}
	}
	// A clone's stopped instances are alike (no node): one series for them, as the exporter does.
	seen := map[string]bool{}
	for _, res := range p.Resources {
		flags := map[string]bool{"active": res.Active, "orphaned": res.Orphaned, "blocked": res.Blocked,
			"failed": res.Failed, "failure_ignored": res.FailureIgnored}
		labels := []string{res.Node, res.ID, strings.ToLower(res.Role), strconv.FormatBool(!res.Unmanaged), "", res.Agent, res.Group, res.Clone}
		key := strings.Join(labels, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, s := range resourceStatuses {
			labels[4] = s
			gauge(pcmkResources, flags[s], labels...)
		}
	}
	for _, h := range p.History {
		fails := float64(h.FailCount)
		if h.FailCount >= pcmk.FailCountInfinity {
			fails = posInf
		}
		add(pcmkFailCount, prometheus.GaugeValue, fails, h.Node, h.Resource)
		add(pcmkMigrationThreshold, prometheus.GaugeValue, float64(h.MigrationThreshold), h.Node, h.Resource)
	}
	type fenceKey struct{ target, action, result string }
	events := map[fenceKey]int{}
	targets := map[string]bool{}
	for _, e := range p.Fencing {
		events[fenceKey{e.Target, e.Action, string(e.Status)}]++
		targets[e.Target] = true
	}
	for _, k := range slices.SortedFunc(maps.Keys(events), func(a, b fenceKey) int {
		return strings.Compare(a.target+a.action+a.result, b.target+b.action+b.result)
	}) {
		add(fencingEvents, prometheus.CounterValue, float64(events[k]), k.target, k.action, k.result)
	}
	for _, n := range p.Nodes {
		f, failing := fencewait.Find(*p, n.Name)
		gauge(fencingFails, failing, n.Name)
		if failing {
			add(fencingSince, prometheus.GaugeValue, float64(f.Since.Unix()), n.Name)
		}
		// On a guest no drill runs (the operator owns the fence devices): no proof is due.
		if r.Health.Guest == "" {
			at := 0.0
			if t, ok := fencedrill.Proven(*p, r.Configuration, n.Name); ok {
				at = float64(t.Unix())
			}
			add(fenceProven, prometheus.GaugeValue, at, n.Name)
		}
	}
	return out
}

// lastFailover is how long after the last successful fencing of the peer, completed before the
// node's last forced cluster f, that cluster served; false when the node never forced one or no fencing explains
// it (an administrator's confirmation, a history cleaned since).
func lastFailover(history pcmk.FenceHistory, f etcdnode.Tally, peer pcmk.NodeStatus) (time.Duration, bool) {
	if f.Count == 0 {
		return 0, false
	}
	fenced, ok := history.LastSuccess(peer.Name, f.Last)
	return f.Last.Sub(fenced), ok
}

// etcdAgentRole names the agent's role from the resource's role and the agent's decision
// attribute, which it sets only while it waits or refuses.
func etcdAgentRole(pacemakerRole, decision string) string {
	switch {
	case pacemakerRole == "Promoted":
		return RoleVoter
	case pacemakerRole == "Stopped" || pacemakerRole == "":
		return RoleStopped
	case decision != "":
		return RoleReady
	default:
		return RoleLearner
	}
}

// guestRole is the role of podman-etcd's etcd on node: a started instance is a voter as
// health.GuestVoter tells (unknown without the configuration: a learner, never a voter on a
// guess).
func guestRole(p *pcmk.Status, node string, conf *pcmk.Configuration) string {
	for _, r := range p.Resources {
		if r.Agent != health.OperatorEtcdAgent || r.Node != node || r.Role != "Started" {
			continue
		}
		if conf != nil && health.GuestVoter(r, conf.Properties) {
			return RoleVoter
		}
		return RoleLearner
	}
	return RoleStopped
}

var posInf = math.Inf(1) // the exporter's value for an INFINITY fail count

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collector reads the node's state at each scrape.
type Collector struct {
	Read func(context.Context) Reading
}

// scrapeTimeout bounds one reading: Prometheus' default scrape timeout is 10 s.
const scrapeTimeout = 8 * time.Second

// Describe sends every metric's description.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range Descs() {
		ch <- d
	}
}

// Collect reads the state and sends its metrics.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, m := range Metrics(c.Read(ctx)) {
		ch <- m
	}
}

// Text is one reading's metrics in Prometheus' text format, through a registry as a scrape gets
// them (what tnfctl gather puts in its bundle).
func (c Collector) Text() ([]byte, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	families, err := reg.Gather()
	var buf bytes.Buffer
	for _, f := range families {
		if _, werr := expfmt.MetricFamilyToText(&buf, f); werr != nil {
			return buf.Bytes(), werr
		}
	}
	return buf.Bytes(), err
}
