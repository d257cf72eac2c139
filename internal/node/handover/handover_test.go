package handover

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

// conditions is an API that keeps the conditions set, and fails while down.
type conditions struct {
	down bool
	set  []string
}

func (c *conditions) Ready(context.Context) error {
	if c.down {
		return errors.New("connection refused")
	}
	return nil
}

func (c *conditions) SetTrue(_ context.Context, condition, _, _ string) error {
	if c.down {
		return errors.New("connection refused")
	}
	if !slices.Contains(c.set, condition) {
		c.set = append(c.set, condition)
	}
	return nil
}

// world is one node as the handover sees it; each test sets what it needs.
type world struct {
	setup      string
	healthy    string // why etcd is not two voters with a leader
	self, peer string // the etcd resource's roles
	busyPort   string
	handed     bool   // the peer's agent has run etcd
	fenced     bool   // the peer was fenced after the time asked about
	without    string // why the peer serves without this node's member
	refreshed  int
}

func (w *world) node() Node {
	return Node{
		Setup:             func() (string, string) { return w.setup, "a BMC check failed" },
		EtcdHealthy:       func(context.Context) (string, error) { return w.healthy, nil },
		Roles:             func(context.Context) (string, string, error) { return w.self, w.peer, nil },
		BusyPort:          func() string { return w.busyPort },
		PeerHandedOver:    func(context.Context) (bool, error) { return w.handed, nil },
		PeerFencedAfter:   func(context.Context, time.Time) (bool, error) { return w.fenced, nil },
		PeerServesWithout: func(context.Context) (string, error) { return w.without, nil },
		Refresh:           func(context.Context) error { w.refreshed++; return nil },
	}
}

const installerPod = `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"},{"name":"etcd"}]}}`

func options(t *testing.T, manifest string) Options {
	dir := t.TempDir()
	o := Options{StaticPodManifest: filepath.Join(dir, "etcd-pod.yaml"), StateFile: filepath.Join(dir, "handover.json"),
		ToldFile: filepath.Join(dir, "told"), Wait: 300 * time.Millisecond, Interval: 10 * time.Millisecond, Out: io.Discard}
	if manifest != "" {
		if err := os.WriteFile(o.StaticPodManifest, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func state(t *testing.T, o Options) State {
	st, ok, err := ReadState(o.StateFile)
	if err != nil || !ok {
		t.Fatalf("state: %v, %v", ok, err)
	}
	return st
}

// TestRunStopsAndSaysWhy: each step that cannot be reached ends the run after Options.Wait with
// the step and its reason recorded, and nothing told that should not be.
func TestRunStopsAndSaysWhy(t *testing.T) {
	rows := []struct {
		name    string
		world   world
		apiDown bool
		step    string
		why     string
		told    bool
	}{
		{"setup failed", world{setup: nodesetup.StateFailed}, false, StepSetup, "tnfctl setup failed here: a BMC check failed", false},
		{"one voter", world{setup: nodesetup.StateDone, healthy: "etcd has 1 members"}, false, StepHealthy, "etcd has 1 members", false},
		{"the peer's agent not started", world{setup: nodesetup.StateDone, peer: "Stopped"}, false, StepHealthy, "the peer's etcd agent is not started", false},
		{"the API down", world{setup: nodesetup.StateDone}, true, StepHealthy, "the API does not answer its readiness check", false},
		{"the operator never acts", world{setup: nodesetup.StateDone, self: "Unpromoted"}, false, StepInstaller, "the operator has not rolled out", true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			o := options(t, installerPod)
			api := &conditions{down: r.apiDown}
			err := Run(context.Background(), o, r.world.node(), api)
			if err == nil || !strings.Contains(err.Error(), "gave up") {
				t.Fatalf("Run: %v", err)
			}
			if st := state(t, o); st.Step != r.step || !strings.Contains(st.Waiting, r.why) {
				t.Errorf("state %+v, want step %s waiting for %q", st, r.step, r.why)
			}
			if told := slices.Contains(api.set, ConditionReady); told != r.told {
				t.Errorf("told the operator: %v, want %v", told, r.told)
			}
		})
	}
}

// TestRunOnAGuest: on a node whose Pacemaker the operator configured, the handover does nothing,
// tells the operator nothing and records no step, at once.
func TestRunOnAGuest(t *testing.T) {
	o := options(t, installerPod)
	api := &conditions{}
	var out strings.Builder
	o.Out = &out
	w := world{setup: nodesetup.StateGuest}
	if err := Run(context.Background(), o, w.node(), api); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, ok, err := ReadState(o.StateFile); ok || err != nil {
		t.Errorf("a step was recorded: %v, %v", ok, err)
	}
	if len(api.set) != 0 || !strings.Contains(out.String(), "none on a guest node") {
		t.Errorf("told the operator %v; printed %q", api.set, out.String())
	}
}

// TestRunTakesOver: the node takes the etcd container out itself only where the peer's agent has
// run etcd (the operator renders the static pod without it), and then when the peer was fenced
// after the operator was told, or serves without this node's member.
func TestRunTakesOver(t *testing.T) {
	rows := []struct {
		name     string
		told     bool
		world    world
		takesOut bool
	}{
		{"peer handed over, fenced after the operator was told", true, world{handed: true, fenced: true}, true},
		{"peer never handed over (the operator never acts), fenced", true, world{fenced: true}, false},
		{"peer handed over and fenced, the operator never told", false, world{handed: true, fenced: true, healthy: "etcd has 1 members"}, false},
		{"peer serves without this node", false, world{handed: true, without: "the peer's etcd agent serves without a member of this node"}, true},
		{"nothing wrong, the operator slow", true, world{handed: true}, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			o := options(t, installerPod)
			if r.told {
				if err := fsutil.WriteTime(o.ToldFile, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			w := r.world
			w.setup, w.self, w.peer = nodesetup.StateDone, "Unpromoted", "Promoted"
			_ = Run(context.Background(), o, w.node(), &conditions{})
			installer, err := staticpod.InstallerEtcd(o.StaticPodManifest)
			if err != nil || installer == r.takesOut {
				t.Errorf("the installer's etcd in the manifest afterwards: %v (%v); taken out wanted: %v", installer, err, r.takesOut)
			}
			if r.takesOut && w.refreshed != 1 {
				t.Errorf("refreshed %d times after taking the container out, want once", w.refreshed)
			}
		})
	}
}

// TestRunResumes: a run finds where the node stands: without the installer's etcd it waits only
// for the agents; it sets the completion once both serve, and a completed handover asks nothing
// again.
func TestRunResumes(t *testing.T) {
	o := options(t, `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"}]}}`)
	o.Credential = filepath.Join(t.TempDir(), "handover.kubeconfig")
	if err := os.WriteFile(o.Credential, []byte("a token"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := &conditions{}
	w := world{self: "Promoted", peer: "Unpromoted"}
	err := Run(context.Background(), o, w.node(), api)
	if st := state(t, o); err == nil || st.Step != StepDone || !strings.Contains(st.Waiting, "the peer's etcd agent does not serve yet") ||
		len(api.set) != 0 || w.refreshed != 0 {
		t.Errorf("handed over before the peer: %v, state %+v, conditions set %v, refreshed %d", err, st, api.set, w.refreshed)
	}
	if _, err := os.Stat(o.Credential); err != nil {
		t.Errorf("the credential, before the handover completed: %v", err)
	}
	w.peer = "Promoted"
	if err := Run(context.Background(), o, w.node(), api); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(api.set, []string{ConditionCompleted}) {
		t.Errorf("both handed over: conditions set %v, want %s only", api.set, ConditionCompleted)
	}
	if _, err := os.Stat(o.Credential); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the credential once the handover completed: %v, want it removed", err)
	}
	api.down = true
	if err := Run(context.Background(), o, w.node(), api); err != nil {
		t.Fatalf("a completed handover asked again: %v", err)
	}
}

// TestRunDropsKubeletMarker: the exception that let cri-o and kubelet start outside Pacemaker
// ends with the installer's etcd here: at once where the manifest has none (a completed handover
// too), and once the operator's rollout took it out; while it is there the marker stays.
func TestRunDropsKubeletMarker(t *testing.T) {
	marker := func(o *Options) {
		o.KubeletMarker = filepath.Join(t.TempDir(), "installer-kubelet")
		if err := os.WriteFile(o.KubeletMarker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(o Options) bool { _, err := os.Stat(o.KubeletMarker); return err == nil }

	o := options(t, installerPod)
	marker(&o)
	w := world{setup: nodesetup.StateDone, self: "Unpromoted", peer: "Unpromoted"}
	_ = Run(context.Background(), o, w.node(), &conditions{})
	if st := state(t, o); st.Step != StepInstaller || !exists(o) {
		t.Fatalf("waiting for the operator: state %+v, marker there %v; want %s and the marker kept", st, exists(o), StepInstaller)
	}
	if err := os.WriteFile(o.StaticPodManifest, []byte(`{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = Run(context.Background(), o, w.node(), &conditions{})
	if exists(o) {
		t.Error("the operator's rollout took the installer's etcd out: the marker is still there")
	}

	done := options(t, `{"kind":"Pod","spec":{"containers":[{"name":"etcdctl"}]}}`)
	marker(&done)
	if err := (&stepper{o: done}).record(State{Step: StepDone, Since: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), done, w.node(), &conditions{}); err != nil || exists(done) {
		t.Errorf("a completed handover: %v, marker there %v", err, exists(done))
	}
}
