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
		{"the configuration unreadable", func(f *Facts) { f.ConfigurationError = "cibadmin: exit 105" }, "could not be read, so whether every fence device"},
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
	event := func(target, delegate string, status pcmk.FenceStatus, at time.Time) pcmk.FenceEvent {
		return pcmk.FenceEvent{Action: "reboot", Target: target, Delegate: delegate, Status: status, Completed: at.Format(completedLayout)}
	}
	history := pcmk.Status{Fencing: pcmk.FenceHistory{event("node2", "node1", pcmk.FenceSucceeded, fault), event("node1", "node2", pcmk.FenceFailed, fault)}}
	record := func(node string, at time.Time) *pcmk.Configuration {
		return &pcmk.Configuration{Properties: map[string]string{PropProven(node): itoa(at)}}
	}
	for _, tc := range []struct {
		name   string
		st     pcmk.Status
		cfg    *pcmk.Configuration
		target string
		want   time.Time // zero: not proven
	}{
		{"nothing", pcmk.Status{}, nil, "node1", time.Time{}},
		{"a drill's record", pcmk.Status{}, record("node1", drilled), "node1", drilled},
		{"a record that is not a time", pcmk.Status{}, &pcmk.Configuration{Properties: map[string]string{PropProven("node1"): "yesterday"}}, "node1", time.Time{}},
		{"another node's record", pcmk.Status{}, record("node1", drilled), "node2", time.Time{}},
		{"a failed fencing proves nothing", history, nil, "node1", time.Time{}},
		{"a fault's fencing", history, nil, "node2", fault},
		{"an administrator's confirmation proves nothing",
			pcmk.Status{Fencing: pcmk.FenceHistory{event("node2", pcmk.ByHuman, pcmk.FenceSucceeded, fault)}}, nil, "node2", time.Time{}},
		{"the newer of record and history: history", history, record("node2", drilled), "node2", fault},
		{"the newer of record and history: record", history, record("node2", fault.Add(time.Hour)), "node2", fault.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Proven(tc.st, tc.cfg, tc.target)
			if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Fatalf("Proven: %v %v, want %v", got, ok, tc.want)
			}
		})
	}
}

func itoa(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
