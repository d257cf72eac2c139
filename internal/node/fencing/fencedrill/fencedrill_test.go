package fencedrill

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func TestRefusal(t *testing.T) {
	healthy := Facts{State: health.Healthy, Summary: "HEALTHY: both nodes serve"}
	for _, tc := range []struct {
		name   string
		change func(*Facts)
		says   string // "" allowed
	}{
		{"healthy, nothing rolled out", func(*Facts) {}, ""},
		{"a guest", func(f *Facts) { f.Guest = "cluster TNF" }, "on a guest"},
		{"a guest that is not healthy", func(f *Facts) { f.Guest, f.State = "cluster TNF", health.Degraded }, "on a guest"},
		{"degraded", func(f *Facts) { f.State, f.Summary = health.Degraded, "DEGRADED: node2 is absent" }, "says degraded: DEGRADED: node2 is absent"},
		{"failover off", func(f *Facts) { f.State = health.FailoverOff }, "both nodes must be healthy"},
		{"recovering", func(f *Facts) { f.State = health.Recovering }, "both nodes must be healthy"},
		{"restoring", func(f *Facts) { f.State = health.Restoring }, "both nodes must be healthy"},
		{"installer's etcd", func(f *Facts) { f.State = health.InstallerEtcd }, "both nodes must be healthy"},
		{"unchecked device", func(f *Facts) { f.UncheckedBMC = []string{"node2_redfish"} }, "node2_redfish take any certificate"},
		{"a rollout", func(f *Facts) { f.Rollout = "node1's machine-config-daemon is Working" }, "rolling a configuration out (node1's"},
		{"not healthy and a rollout: health first", func(f *Facts) { f.State, f.Rollout = health.Degraded, "x" }, "both nodes must be healthy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy
			tc.change(&f)
			err := Refusal(f)
			switch {
			case tc.says == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.says != "" && (err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.says)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.says)
			}
		})
	}
}

func node(name string, annotations map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func daemon(state, current, desired string) map[string]string {
	return map[string]string{annotationState: state, annotationCurrent: current, annotationDesired: desired}
}

func TestRollout(t *testing.T) {
	done := daemon("Done", "rendered-master-a", "rendered-master-a")
	names := []string{"node1", "node2"}
	for _, tc := range []struct {
		name  string
		nodes []corev1.Node
		want  string
	}{
		{"both done", []corev1.Node{node("node1", done), node("node2", done), node("worker", daemon("Working", "a", "b"))}, ""},
		{"one working", []corev1.Node{node("node1", done), node("node2", daemon("Working", "rendered-master-a", "rendered-master-b"))},
			"node2's machine-config-daemon is Working"},
		{"one degraded", []corev1.Node{node("node1", daemon("Degraded", "a", "b")), node("node2", done)}, "node1's machine-config-daemon is Degraded"},
		{"a new configuration not begun", []corev1.Node{node("node1", daemon("Done", "rendered-master-a", "rendered-master-b")), node("node2", done)},
			"node1 is to go from rendered-master-a to rendered-master-b"},
		{"no Node object", []corev1.Node{node("node1", done)}, "node2 has no Node object"},
		{"no daemon state", []corev1.Node{node("node1", nil), node("node2", done)}, "node1 has no machine-config-daemon state"},
		{"both", []corev1.Node{node("node1", nil)}, "node1 has no machine-config-daemon state; node2 has no Node object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Rollout(tc.nodes, names); got != tc.want {
				t.Fatalf("Rollout: %q, want %q", got, tc.want)
			}
		})
	}
}

// completedLayout is crm_mon's format for a fencing's completion.
const completedLayout = "2006-01-02 15:04:05Z07:00"

func TestProven(t *testing.T) {
	drilled := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	fault := drilled.Add(24 * time.Hour)
	history := pcmk.FenceHistory{
		{Action: "reboot", Target: "node2", Status: pcmk.FenceSucceeded, Completed: fault.Format(completedLayout)},
		{Action: "reboot", Target: "node1", Status: pcmk.FenceFailed, Completed: fault.Format(completedLayout)},
	}
	record := func(v string) []pcmk.NodeStatus {
		return []pcmk.NodeStatus{{Name: "node1", Attributes: map[string]string{AttrProven: v}}, {Name: "node2"}}
	}
	for _, tc := range []struct {
		name   string
		st     pcmk.Status
		target string
		want   time.Time // zero: not proven
	}{
		{"nothing", pcmk.Status{Nodes: record("")}, "node1", time.Time{}},
		{"a drill's record", pcmk.Status{Nodes: record(itoa(drilled))}, "node1", drilled},
		{"a record that is not a time", pcmk.Status{Nodes: record("yesterday")}, "node1", time.Time{}},
		{"a failed fencing proves nothing", pcmk.Status{Nodes: record(""), Fencing: history}, "node1", time.Time{}},
		{"a fault's fencing", pcmk.Status{Nodes: record(""), Fencing: history}, "node2", fault},
		{"the newer of record and history: history",
			pcmk.Status{Nodes: []pcmk.NodeStatus{{Name: "node2", Attributes: map[string]string{AttrProven: itoa(drilled)}}}, Fencing: history}, "node2", fault},
		{"the newer of record and history: record",
			pcmk.Status{Nodes: []pcmk.NodeStatus{{Name: "node2", Attributes: map[string]string{AttrProven: itoa(fault.Add(time.Hour))}}}, Fencing: history},
			"node2", fault.Add(time.Hour)},
		{"another node's record", pcmk.Status{Nodes: record(itoa(drilled))}, "node2", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Proven(tc.st, tc.target)
			if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Fatalf("Proven: %v %v, want %v", got, ok, tc.want)
			}
		})
	}
}

func itoa(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
