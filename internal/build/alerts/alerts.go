// Package alerts is the layer's alerting rules over the metrics tnfctl metrics serves: few and
// symptom-based (what a site must act on, not every cause), each with a summary, a description
// that names the node, and a runbook section in docs/runbooks.md. They are written as a
// PrometheusRule for OpenShift's monitoring, and as a plain rule file for promtool.
package alerts

import (
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Namespace is where the PrometheusRule goes: etcd's, which the platform monitoring watches.
const Namespace = "openshift-etcd"

// Name is the PrometheusRule's name.
const Name = "tnf-layer-alerts"

// Severities, as OpenShift's alerts use them.
const (
	critical = "critical"
	warning  = "warning"
	info     = "info"
)

// RunbookRepo is the module's repository. Each alert's runbook_url is its section of
// docs/runbooks.md there at the commit the layer was built from, so an alert opens the runbook of
// the release the nodes run, not main's (GitHub's anchor for a heading is the heading in lower
// case).
const RunbookRepo = "https://github.com/tnf-layer/tnf-layer"

// NodeRunbooks is where every node carries the same runbooks (the layer ships them), readable
// when the API or the internet is not.
const NodeRunbooks = "/usr/share/doc/tnf-layer/runbooks.md"

// runbook is the description's last sentence: where the runbook explains the alert.
func runbook(alert string) string {
	return " Runbook: docs/runbooks.md#" + strings.ToLower(alert) + ", also on each node in " + NodeRunbooks + "."
}

// RunbookURL is the alert's runbook_url annotation: its runbook at ref, a commit of the
// repository ("main" when the build's commit is unknown).
func RunbookURL(ref, alert string) string {
	if ref == "" {
		ref = "main"
	}
	return RunbookRepo + "/blob/" + ref + "/docs/runbooks.md#" + strings.ToLower(alert)
}

type alert struct {
	name, expr, severity string
	forDuration          monitoringv1.Duration // "" fires at the first evaluation
	summary, description string
}

// The alerts. Every node serves the whole cluster's Pacemaker view, so the expressions aggregate
// over the scraping instance: a peer that is off serves nothing, and what its survivor serves
// decides.
var all = []alert{
	{
		name:     "TNFPeerMissing",
		expr:     `min by (node) (tnf_cluster_member) == 0`,
		severity: warning, forDuration: "10m",
		summary:     "A node of the two-node cluster is missing.",
		description: "{{ $labels.node }} has not been a member of the two-node cluster for 10 minutes: the control plane runs on one node, and a second fault stops it.",
	},
	{
		name: "TNFNodeInert",
		// A node rolled out before its peer waits with the installer's etcd serving on it: that
		// is the rollout, not a node kept out.
		expr:     `max by (node) (tnf_inert) == 1 unless on (node) max by (node) (tnf_handover_pending) == 1`,
		severity: warning, forDuration: "10m",
		summary:     "A node has waited inert for its peer for 10 minutes.",
		description: "{{ $labels.node }} booted without seeing its peer and keeps cri-o, kubelet and etcd stopped until the peer joins or an administrator confirms it powered off (tnfctl confirm-peer-down).",
	},
	{
		name:     "TNFFencingFailing",
		expr:     `max by (target) (tnf_fencing_failing) == 1`,
		severity: critical, forDuration: "2m",
		summary:     "Fencing of a node keeps failing; etcd waits.",
		description: "The fencing of {{ $labels.target }} has failed for 2 minutes: its survivor's etcd accepts no write until the fencing succeeds or an administrator confirms {{ $labels.target }} powered off. tnfctl status on the survivor says why.",
	},
	// A failed device is stopped (migration-threshold=1) and started again once its failure is 2
	// minutes old, so its fail count is 0 for the moment between the two: the window bridges
	// that moment, and the device's status is no sign (stopped, not failed).
	{
		name:     "TNFFencingNotPossible",
		expr:     `max by (resource) (max_over_time(ha_cluster_pacemaker_fail_count[3m])) > 0 and on (resource) ha_cluster_pacemaker_resources{agent=~"stonith:.*"}`,
		severity: warning, forDuration: "5m",
		summary:     "A fence device fails its BMC check.",
		description: "Pacemaker's check of the fence device {{ $labels.resource }} (the BMC's status read with the configured credentials) has kept failing for 5 minutes: if its node fails now, it cannot be fenced and its peer stops serving. tnfctl fence-check reproduces the check.",
	},
	{
		name: "TNFEtcdNotVoter",
		// Until a node's handover is done the installer's etcd serves there, not the agent's.
		expr:     `max by (node) (tnf_etcd_role{role="voter"}) == 0 and on (node) min by (node) (tnf_cluster_member) == 1 unless on (node) max by (node) (tnf_handover_pending) == 1`,
		severity: warning, forDuration: "15m",
		summary:     "etcd is not a voting member on a node of the cluster.",
		description: "{{ $labels.node }} is a member of the cluster, but its etcd has not been promoted for 15 minutes: the cluster has no etcd redundancy. tnfctl status shows why the etcd agent waits.",
	},
	{
		name:        "TNFClusterForced",
		expr:        `max by (node) (increase(tnf_etcd_forced_clusters_total[15m])) > 0`,
		severity:    info,
		summary:     "etcd was restarted as a cluster of one.",
		description: "The etcd agent on {{ $labels.node }} restarted etcd as a cluster of one after its peer was fenced or confirmed down. The peer rejoins as a learner when it comes back.",
	},
	{
		name:        "TNFEtcdCopiesDropped",
		expr:        `max by (node) (increase(tnf_etcd_copies_dropped_total[1h])) > 0`,
		severity:    warning,
		summary:     "A node's etcd data disk cannot keep backup_count moved-aside copies.",
		description: "The etcd agent on {{ $labels.node }} deleted moved-aside data dirs before backup_count asked, the oldest first, to make room for the data it received from its peer: the disk holding the data dir is too small for the database and its copies. The agent's log names each copy deleted.",
	},
	{
		name: "TNFLayerReleaseMismatch",
		// cluster_version{type="current"} is the release the cluster runs or is updating to;
		// without it (no cluster-version operator) there is nothing to compare with.
		expr: `(max by (node, release) (tnf_layer_release_info) unless on (release) label_replace(max by (version) (cluster_version{type="current"}), "release", "$1", "version", "(.+)"))` +
			` and on () (count(cluster_version{type="current"}) > 0)`,
		severity: warning, forDuration: "2h",
		summary:     "A node's operating system was built for another OpenShift release than the cluster runs.",
		description: "The layer on {{ $labels.node }} was built on OpenShift {{ $labels.release }}, and the cluster runs or is updating to another release: with the out-of-cluster rollout an OpenShift update does not change the nodes' operating system (its kubelet included) until the layer is built for the new release and its MachineConfig applied.",
	},
	{
		name: "TNFSetupFailed",
		// Only where the failure keeps the node out: a later run that failed on a node set up
		// before (a password applied by hand while the peer is away) leaves it serving.
		expr:     `max by (node) (tnf_health_state{state="setup-failed"}) == 1`,
		severity: critical, forDuration: "1m",
		summary:     "The cluster setup failed on a node.",
		description: "tnfctl setup failed on {{ $labels.node }}: tnfctl status there says why. It retries every 30 s; the node stays inert meanwhile.",
	},
	{
		name: "TNFSettingsNotApplied",
		// A failed run on a node set up before (TNFSetupFailed covers the node kept out): the
		// node serves, without the change. 15 minutes: a rollout runs setup on one node, then
		// on the other, and the race winner's run waits up to 5 minutes for its peer.
		expr: `max by (node) (tnf_setup_state{state="failed"}) == 1` +
			` unless on (node) max by (node) (tnf_health_state{state="setup-failed"}) == 1`,
		severity: warning, forDuration: "15m",
		summary:     "A node keeps older settings: the last tnfctl setup on it failed.",
		description: "tnfctl setup failed on {{ $labels.node }}, which was set up before: it keeps the settings of its last completed run, and a changed /etc/tnf (cluster.yaml, a BMC password or CA bundle) is not applied. tnfctl status there says why (its Setup: line) and which settings each node runs.",
	},
	{
		name:        "TNFAutoUnblockRefused",
		expr:        `max by (node) (increase(tnf_auto_unblock_decisions_total{outcome="refused"}[30m])) >= 3`,
		severity:    warning,
		summary:     "auto-unblock keeps refusing to start a node alone.",
		description: "{{ $labels.node }} waits alone, and the peer's BMC did not prove the peer powered off in 3 or more checks within 30 minutes. If the peer is off, confirm it (tnfctl confirm-peer-down).",
	},
	// An administrator's setting, not a fault: an hour covers a maintenance window's work, and
	// what outlasts it is what is left behind. Every node serves the same Pacemaker view.
	{
		name:     "TNFFailoverOff",
		expr:     `max by (cause, subject) (tnf_failover_off) == 1`,
		severity: warning, forDuration: "1h",
		summary:     "Pacemaker will not fail over: a setting has kept it off for an hour.",
		description: "{{ $labels.cause }}{{ with $labels.subject }} ({{ . }}){{ end }} has been set for an hour: Pacemaker does not recover a fault it covers (a node lost is not fenced and replaced, or a failed service not restarted). tnfctl status lists each such setting with the command that undoes it.",
	},
	// A device's setting, not a fault: it fires within the hour a device is made so (the
	// operator's fencing job writes ssl_insecure from its Secret's certificateVerification).
	{
		name:     "TNFFenceDeviceUnchecked",
		expr:     `max by (device) (tnf_fence_device_unchecked) == 1`,
		severity: warning, forDuration: "30m",
		summary:     "A fence device takes any certificate from its BMC.",
		description: "The fence device {{ $labels.device }} runs with ssl_insecure: it accepts whatever certificate answers at its BMC's address, so whoever takes that address can report a power-off that did not happen, and the survivor would then serve beside a live peer. tnfctl status says how to make it check the certificate.",
	},
	// A proof's age, not a fault: a day's delay costs nothing against 90 days, and an hour
	// after the first setup a cluster that was never drilled says so.
	{
		name:     "TNFFencingNotProven",
		expr:     `time() - max by (target) (tnf_fence_proven_timestamp_seconds) > 90 * 86400`,
		severity: warning, forDuration: "1h",
		summary:     "A node's fencing has not been proven for 90 days.",
		description: "The fencing of {{ $labels.target }} has not succeeded for 90 days, or never, neither in a drill nor after a fault: a wrong credential, a BMC that takes the request and does nothing, or a fence device on the wrong machine shows only on the day of a fault. Prove it with tnfctl fence-drill on the other node, when both are healthy and nothing is rolled out.",
	},
	// At once: what wrote the manifest (a stock restore script) may have moved the operator's
	// manifest or the data dir already, and the next restart of etcd here would meet it.
	{
		name:        "TNFSecondEtcdRefused",
		expr:        `max by (node) (tnf_second_etcd_refused) > 0`,
		severity:    critical,
		summary:     "A second etcd was refused on a node: a stock restore procedure was started there.",
		description: "A pod with an etcd container appeared among the kubelet's static pods on {{ $labels.node }}, where Pacemaker runs etcd; the layer moved it out before it could serve a second copy of the data beside Pacemaker's etcd. OpenShift's cluster-restore.sh and quorum-restore.sh write such a pod and move etcd's files: tnfctl status there says what was moved and where it is kept.",
	},
	// TNFEtcdNotVoter and TNFNodeInert are silent while a handover is pending: a handover that
	// never completes would leave the node without the agent's etcd and nothing saying so. A
	// rollout and the operator's revision take about an hour; six cover a slow one.
	{
		name:     "TNFHandoverWaiting",
		expr:     `max by (node) (tnf_handover_pending) == 1`,
		severity: warning, forDuration: "6h",
		summary:     "A node's etcd has not been handed over to Pacemaker for 6 hours.",
		description: "etcd on {{ $labels.node }} is still the installer's static pod, or in its handover, after 6 hours: Pacemaker does not manage it, and no failover covers it yet. tnfctl status there says what the handover waits for.",
	},
	// The node renews its token once half its lifetime has passed (tnf-keys-sync, every 5
	// minutes): a quarter left means the renewals have failed for a quarter of its lifetime. It
	// must fire before the token expires: after, the endpoint lets no scraper in.
	{
		name:     "TNFNodeCredentialExpiring",
		expr:     `min by (node) ((tnf_node_credential_expiry_timestamp_seconds - time()) / (tnf_node_credential_expiry_timestamp_seconds - tnf_node_credential_issued_timestamp_seconds)) < 0.25`,
		severity: warning, forDuration: "10m",
		summary:     "A node's API token expires soon: its renewal keeps failing.",
		description: "The API token of {{ $labels.node }} has less than a quarter of its lifetime left; the node renews it once half has passed, so every renewal since has failed. When it expires the node fetches no Secret (a rotated BMC password no longer reaches its fence devices), cannot taint a fenced peer, and its metrics endpoint lets no scraper in, which silences this node's alerts.",
	},
}

// Rules are the alerting rules, their runbooks at ref (see RunbookURL).
func Rules(ref string) []monitoringv1.Rule {
	var rules []monitoringv1.Rule
	for _, a := range all {
		r := monitoringv1.Rule{
			Alert: a.name,
			Expr:  intstr.FromString(a.expr),
			// OpenShift's alerting conventions: a namespace label on every alert (the
			// expressions aggregate it away), the runbook as runbook_url.
			Labels:      map[string]string{"severity": a.severity, "namespace": Namespace},
			Annotations: map[string]string{"summary": a.summary, "description": a.description + runbook(a.name), "runbook_url": RunbookURL(ref, a.name)},
		}
		if a.forDuration != "" {
			d := a.forDuration
			r.For = &d
		}
		rules = append(rules, r)
	}
	return rules
}

func groups(ref string) []monitoringv1.RuleGroup {
	return []monitoringv1.RuleGroup{{Name: "tnf-layer", Rules: Rules(ref)}}
}

// PrometheusRule is the rules for OpenShift's monitoring, their runbooks at ref.
func PrometheusRule(ref string) *monitoringv1.PrometheusRule {
	return &monitoringv1.PrometheusRule{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PrometheusRuleKind},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace},
		Spec:       monitoringv1.PrometheusRuleSpec{Groups: groups(ref)},
	}
}

// RuleFile is the rules as a Prometheus rule file (what promtool checks), their runbooks at
// main.
func RuleFile() ([]byte, error) {
	return yaml.Marshal(struct {
		Groups []monitoringv1.RuleGroup `json:"groups"`
	}{groups("")})
}
