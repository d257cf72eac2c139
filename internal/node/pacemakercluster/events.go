package pacemakercluster

import (
	"cmp"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Event is one Event to record about the object.
type Event struct {
	Type    string // corev1.EventTypeNormal or corev1.EventTypeWarning
	Reason  string
	Message string
	// Key is what makes two Events the same: Dedup records one per Key within its window.
	Key string
}

// Event reasons. Where the field's operator has one (pkg/tnf/pkg/pacemaker), it is the same
// word, so that an alert or a search written for the field's Events finds the layer's.
const (
	ReasonFencing           = "PacemakerFencingEvent"
	ReasonNodeOffline       = "PacemakerNodeOffline"
	ReasonInMaintenance     = "PacemakerClusterInMaintenance"
	ReasonStatusStale       = "PacemakerStatusStale"
	ReasonHealthy           = "PacemakerHealthy"
	ReasonNodeStandby       = "PacemakerNodeStandby"
	ReasonNodeInMaintenance = "PacemakerNodeInMaintenance"
	ReasonServingAlone      = "EtcdServingAlone"
	ReasonRejoined          = "EtcdMemberRejoined"
)

// The field's deduplication windows: a fencing is recorded once a day, anything else once in
// five minutes.
const (
	FencingWindow = 24 * time.Hour
	DefaultWindow = 5 * time.Minute
)

// StaleAfter is how old a published status may be before a reader should not trust it: the
// field's operator's threshold.
const StaleAfter = 5 * time.Minute

// Events are what changed from prev (nil: nothing published yet) to cur, and the fencing in
// fencing that completed since prev was published (since a day ago without prev), at now.
// Conditions that merely stay as they are record nothing: a reader sees them in the object.
func Events(prev *Status, cur Status, fencing pcmk.FenceHistory, now time.Time) []Event {
	var events []Event
	since := now.Add(-FencingWindow)
	if prev != nil && prev.LastUpdated.Time.After(since) {
		since = prev.LastUpdated.Time
	}
	if prev != nil && !prev.LastUpdated.IsZero() && now.Sub(prev.LastUpdated.Time) > StaleAfter {
		events = append(events, Event{Type: corev1.EventTypeWarning, Reason: ReasonStatusStale, Key: "stale|" + prev.LastUpdated.UTC().Format(time.RFC3339),
			Message: fmt.Sprintf("no node published the cluster's status from %s to %s (%s): no coordinator with quorum had a credential "+
				"and an API that took writes",
				stamp(prev.LastUpdated.Time), stamp(now), now.Sub(prev.LastUpdated.Time).Round(time.Second))})
	}
	for _, f := range fencing {
		at, ok := f.CompletedAt()
		if !ok || at.Before(since) || at.After(now) || (f.Status != pcmk.FenceSucceeded && f.Status != pcmk.FenceFailed) {
			continue
		}
		msg := fmt.Sprintf("%s was fenced (%s) at %s", f.Target, f.Action, stamp(at))
		if f.Delegate != "" {
			msg += " by " + f.Delegate
		}
		if f.Status == pcmk.FenceFailed {
			msg = fmt.Sprintf("fencing %s (%s) failed at %s: %s", f.Target, f.Action, stamp(at), orUnknown(f.ExitReason))
		}
		// As the field's: a fencing done is Normal, one that failed a Warning.
		typ := corev1.EventTypeNormal
		if f.Status == pcmk.FenceFailed {
			typ = corev1.EventTypeWarning
		}
		events = append(events, Event{Type: typ, Reason: ReasonFencing, Message: msg,
			Key: fmt.Sprintf("fencing|%s|%s|%s|%s", f.Target, f.Action, f.Completed, f.Status)})
	}
	if prev == nil {
		return events
	}
	if fell(prev.Conditions, cur.Conditions, InService) {
		events = append(events, warning(ReasonInMaintenance, "cluster", "Pacemaker is in maintenance mode: it watches, recovers and fences nothing "+
			"(pcs property set maintenance-mode=false ends it)"))
	}
	for _, n := range nodesOf(&cur) {
		p := nodeOf(prev, n.NodeName)
		if p == nil {
			continue
		}
		if fell(p.Conditions, n.Conditions, Online) {
			events = append(events, warning(ReasonNodeOffline, n.NodeName, n.NodeName+" is offline: it left Pacemaker's membership"))
		}
		if fell(p.Conditions, n.Conditions, Active) {
			events = append(events, warning(ReasonNodeStandby, n.NodeName, n.NodeName+" is in standby: nothing runs there, so it fails nothing over "+
				"(pcs node unstandby "+n.NodeName+" ends it)"))
		}
		if fell(p.Conditions, n.Conditions, InService) && meta.IsStatusConditionTrue(cur.Conditions, InService) {
			events = append(events, warning(ReasonNodeInMaintenance, n.NodeName, n.NodeName+" is in maintenance: nothing there is watched "+
				"(pcs node unmaintenance "+n.NodeName+" ends it)"))
		}
	}
	// etcd serving from one node alone, and its end: the other node's member started again. It
	// rejoins as a learner and is Healthy once it votes; PacemakerHealthy says when the whole
	// cluster is.
	alone, gone := servingAlone(cur)
	if alone != "" {
		if p := nodeOf(prev, gone); p != nil && meta.IsStatusConditionTrue(etcdOf(p), Started) {
			events = append(events, warning(ReasonServingAlone, alone, "etcd serves from "+alone+" alone: "+gone+"'s member stopped, "+
				"so a fault of "+alone+" now stops the cluster until "+gone+" is back"))
		}
	}
	if was, back := servingAlone(*prev); was != "" && alone == "" {
		if n := nodeOf(&cur, back); n != nil && meta.IsStatusConditionTrue(etcdOf(n), Started) {
			events = append(events, Event{Type: corev1.EventTypeNormal, Reason: ReasonRejoined, Key: ReasonRejoined + "|" + back,
				Message: back + "'s etcd member started again and rejoins " + was + "'s: a learner until it has caught up, then a voter"})
		}
	}
	if rose(prev.Conditions, cur.Conditions, Healthy) {
		events = append(events, Event{Type: corev1.EventTypeNormal, Reason: ReasonHealthy, Key: ReasonHealthy,
			Message: "the cluster is healthy: both nodes serve, etcd has two voters, and Pacemaker would fail over"})
	}
	return events
}

func warning(reason, subject, message string) Event {
	return Event{Type: corev1.EventTypeWarning, Reason: reason, Message: message, Key: reason + "|" + subject}
}

// fell says whether condition typ was True in prev and is False in cur.
func fell(prev, cur []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(prev, typ) && meta.IsStatusConditionFalse(cur, typ)
}

// rose says whether condition typ was False in prev and is True in cur.
func rose(prev, cur []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionFalse(prev, typ) && meta.IsStatusConditionTrue(cur, typ)
}

// servingAlone names the node whose etcd is a healthy voter while the other's is not started.
func servingAlone(s Status) (alone, gone string) {
	nodes := nodesOf(&s)
	if len(nodes) != expectedNodes {
		return "", ""
	}
	for i, n := range nodes {
		other := nodes[1-i]
		if meta.IsStatusConditionTrue(etcdOf(&n), Healthy) && meta.IsStatusConditionFalse(etcdOf(&other), Started) {
			return n.NodeName, other.NodeName
		}
	}
	return "", ""
}

func nodesOf(s *Status) []NodeStatus {
	if s == nil || s.Nodes == nil {
		return nil
	}
	return *s.Nodes
}

func nodeOf(s *Status, name string) *NodeStatus {
	for _, n := range nodesOf(s) {
		if n.NodeName == name {
			return &n
		}
	}
	return nil
}

func etcdOf(n *NodeStatus) []metav1.Condition {
	for _, r := range n.Resources {
		if r.Name == Etcd {
			return r.Conditions
		}
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func orUnknown(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// Dedup records each Event's Key once within its window: FencingWindow for a fencing, Window
// (DefaultWindow when zero) for any other.
type Dedup struct {
	Window time.Duration
	last   map[string]time.Time
}

// Due says whether e may be recorded at now: no Event of its Key was within its window.
func (d *Dedup) Due(e Event, now time.Time) bool {
	at, ok := d.last[e.Key]
	return !ok || now.Sub(at) >= d.window(e)
}

// Recorded remembers that e was recorded at now.
func (d *Dedup) Recorded(e Event, now time.Time) {
	if d.last == nil {
		d.last = map[string]time.Time{}
	}
	for k, at := range d.last {
		if now.Sub(at) > max(FencingWindow, d.window(e)) {
			delete(d.last, k) // no window is longer: forgotten keys would only grow
		}
	}
	d.last[e.Key] = now
}

func (d *Dedup) window(e Event) time.Duration {
	if e.Reason == ReasonFencing {
		return FencingWindow
	}
	return cmp.Or(d.Window, DefaultWindow)
}
