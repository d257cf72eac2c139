// Package handover is `tnfctl handover`: from the installer's etcd (the etcd container of the
// cluster-etcd-operator's static pod, serving the cluster's data on both nodes) to the etcd
// agent's, on the same data dir, with the same cluster and member IDs, one node at a time,
// through the operator's own handshake. Each node runs it; it never stops or starts etcd
// itself: the operator takes the container out of the static pod, the kubelet stops it, and
// the agent starts the member again (decision.Input.Installer and Counted).
package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

// StateFile is where this node's handover stands, for tnfctl status (JSON, State).
const StateFile = "/var/lib/tnf/handover.json"

// ToldFile is when this node told the operator that the agent may take over.
const ToldFile = "/var/lib/tnf/handover-told"

// DefaultKubeconfig is the handover's credential: a token bound to ClusterRole() only.
const DefaultKubeconfig = "/etc/tnf/secrets/handover.kubeconfig"

// The steps, in order.
const (
	StepSetup     = "layer-set-up"          // tnfctl setup completed here
	StepHealthy   = "control-plane-healthy" // both members vote, one leads, the API answers
	StepTold      = "operator-told"         // ExternalEtcdReadyForTransition set
	StepInstaller = "installer-etcd-gone"   // the static pod has no etcd container here
	StepAgent     = "agent-etcd-serving"    // the agent's member serves here, promoted
	StepDone      = "done"                  // both agents serve: ExternalEtcdHasCompletedTransition set
)

// State is where this node's handover stands: the step it waits for, since when, and why it
// still waits.
type State struct {
	Step    string    `json:"step"`
	Since   time.Time `json:"since"`
	Waiting string    `json:"waiting,omitempty"`
}

// Done says the handover completed here (not: waits to).
func (s State) Done() bool { return s.Step == StepDone && s.Waiting == "" }

// HandedOver says this node's etcd got past the installer's: the agent's member serves here or is
// about to.
func (s State) HandedOver() bool { return s.Step == StepAgent || s.Step == StepDone }

// ReadState reads the state file; ok is false when this node never ran a handover.
func ReadState(path string) (s State, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		return s, false, fmt.Errorf("%s: %w", path, err)
	}
	return s, true, nil
}

// Node is what the handover needs to know of this node; tnfctl gives the real ones.
type Node struct {
	// Setup is where tnfctl setup stands here (nodesetup.State): nothing is handed over to a
	// Pacemaker the layer did not set up.
	Setup func() (state, reason string)
	// EtcdHealthy says why the etcd cluster is not two voters with a leader ("" when it is).
	EtcdHealthy func(context.Context) (string, error)
	// Roles is the etcd resource's role on this node and on the peer ("Promoted"…).
	Roles func(context.Context) (self, peer string, err error)
	// BusyPort is the first of this node's etcd ports something listens on ("" when free).
	BusyPort func() string
	// PeerHandedOver says whether the peer's agent has run etcd (it published a data record).
	PeerHandedOver func(context.Context) (bool, error)
	// PeerFencedAfter says whether Pacemaker fenced the peer after t.
	PeerFencedAfter func(ctx context.Context, t time.Time) (bool, error)
	// PeerServesWithout says why the peer's agent serves etcd without this node's member ("" when
	// it does not, or cannot tell).
	PeerServesWithout func(context.Context) (string, error)
	// Refresh has Pacemaker probe the etcd resource on this node now, so the agent decides at
	// once instead of at its next monitor.
	Refresh func(context.Context) error
}

// API is what the handover asks of the OpenShift API; Operator is the real one.
type API interface {
	// Ready says why the API server is not ready (nil when it is).
	Ready(context.Context) error
	// SetTrue sets a condition of the operator's Etcd object to True (a True one stays).
	SetTrue(ctx context.Context, condition, reason, message string) error
}

// Options tune a run.
type Options struct {
	StaticPodManifest string
	// KubeletMarker, removed once the installer's etcd is gone here: from then on only
	// Pacemaker starts cri-o and kubelet (staticpod.KubeletMarker; empty: none).
	KubeletMarker string
	StateFile     string
	// ToldFile keeps when this node told the operator (the operator never takes it back).
	ToldFile string
	// Credential, the handover's kubeconfig, is removed once the handover is done here: it may
	// rewrite the status of the operator's Etcd object, and nothing needs it again.
	Credential string
	Wait       time.Duration // longest wait of each step
	Interval   time.Duration // how often a waiting step looks again
	Out        io.Writer
}

// Run hands this node's etcd over, or resumes where an earlier run stopped (a reboot, a power
// cut): where it stands is read from the node, Pacemaker and the API; of its own files only
// "done" (the state file) and the time it told the operator, which never changes, are read
// back. It returns when this node's etcd is the agent's, or with why it stopped waiting.
func Run(ctx context.Context, o Options, n Node, op API) error {
	// A guest's etcd is the operator's podman-etcd, which the operator's own jobs moved there:
	// there is nothing to hand over, and nothing to tell the operator.
	if state, why := n.Setup(); state == nodesetup.StateGuest {
		fmt.Fprintf(o.Out, "handover: none on a guest node (%s)\n", why)
		return nil
	}
	s := &stepper{o: o}
	// An unreadable manifest counts as the installer's etcd (staticpod.InstallerEtcd): its steps
	// wait and say why.
	installer, _ := staticpod.InstallerEtcd(o.StaticPodManifest)
	if !installer {
		if err := s.dropKubeletMarker(); err != nil {
			return err
		}
	}
	if st, ok, err := ReadState(o.StateFile); err != nil {
		return err
	} else if ok && st.Done() {
		fmt.Fprintf(o.Out, "handover: done since %s\n", st.Since.Format(time.RFC3339))
		return s.dropCredential()
	}
	if installer {
		if err := s.untilInstallerGone(ctx, n, op); err != nil {
			return err
		}
		// Unless the agent's own monitor was first: then there is nothing to probe.
		if self, _, err := n.Roles(ctx); err != nil || self != "Promoted" {
			if err := n.Refresh(ctx); err != nil {
				fmt.Fprintf(o.Out, "handover: the agent decides at its next monitor (refresh failed: %v)\n", err)
			}
		}
		if err := s.dropKubeletMarker(); err != nil {
			return err
		}
	}
	if err := s.wait(ctx, StepAgent, func(ctx context.Context) (string, error) {
		self, _, err := n.Roles(ctx)
		if err != nil {
			return "Pacemaker does not answer: " + err.Error(), nil
		}
		if self != "Promoted" {
			return "the agent's etcd is " + self + " here", nil
		}
		return n.EtcdHealthy(ctx)
	}); err != nil {
		return err
	}
	// Both nodes set it, once both agents serve: whichever node is handed over last, or comes
	// back last from a failure in between.
	if err := s.wait(ctx, StepDone, func(ctx context.Context) (string, error) {
		if _, peer, err := n.Roles(ctx); err != nil || peer != "Promoted" {
			return fmt.Sprintf("the peer's etcd agent does not serve yet (%s, %v)", peer, err), nil
		}
		if err := op.SetTrue(ctx, ConditionCompleted, ReasonCompleted, "Pacemaker runs etcd on both nodes"); err != nil {
			return "setting " + ConditionCompleted + ": " + err.Error(), nil
		}
		return "", nil
	}); err != nil {
		return err
	}
	if err := s.record(State{Step: StepDone, Since: time.Now().UTC()}); err != nil {
		return err
	}
	return s.dropCredential()
}

// dropCredential removes the handover's kubeconfig and says what the administrator removes in
// the API: the account behind it, which revokes every token it was given.
func (s *stepper) dropCredential() error {
	if s.o.Credential == "" {
		return nil
	}
	if err := os.Remove(s.o.Credential); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("handover: done, but its credential stays: %w", err)
	}
	// The account's names are those install.md has the administrator create.
	fmt.Fprintf(s.o.Out, "handover: done; its credential %s removed. Remove its account in the API too: "+
		"oc delete clusterrolebinding tnf-handover; oc delete serviceaccount tnf-handover -n openshift-etcd-operator\n", s.o.Credential)
	return nil
}

// dropKubeletMarker ends the exception that let cri-o and kubelet start outside Pacemaker while
// the kubelet ran the installer's etcd here (nodesetup.BootServices).
func (s *stepper) dropKubeletMarker() error {
	if s.o.KubeletMarker == "" {
		return nil
	}
	return fsutil.RemoveIfExists(s.o.KubeletMarker)
}

// untilInstallerGone runs the steps up to the installer's etcd gone from this node: through the
// operator's rollout once it was told, or taken out here when a node failed during the handover
// (see takeOverWhy).
func (s *stepper) untilInstallerGone(ctx context.Context, n Node, op API) error {
	told, _, err := fsutil.ReadTime(s.o.ToldFile)
	if err != nil {
		return err
	}
	tookOut := false
	// takeOut drops the etcd container from the kubelet's manifest here when takeOverWhy says
	// so, once; it says whether the installer's etcd is (being) taken out.
	takeOut := func(ctx context.Context) (bool, error) {
		if tookOut {
			return true, nil
		}
		why := s.takeOverWhy(ctx, n, told)
		if why == "" {
			return false, nil
		}
		if err := staticpod.DropEtcd(s.o.StaticPodManifest); err != nil {
			return false, err
		}
		fmt.Fprintf(s.o.Out, "handover: took the etcd container out of the static pod here: %s\n", why)
		tookOut = true
		return true, nil
	}
	if err := s.wait(ctx, StepSetup, func(context.Context) (string, error) {
		switch state, reason := n.Setup(); state {
		case nodesetup.StateDone:
			return "", nil
		case nodesetup.StateFailed:
			return "tnfctl setup failed here: " + reason, nil
		case nodesetup.StateGuest:
			return "", fmt.Errorf("this node became a guest of the cluster-etcd-operator's configuration: no handover (%s)", reason)
		default:
			return "tnfctl setup has not completed here (" + state + ")", nil
		}
	}); err != nil {
		return err
	}
	if err := s.wait(ctx, StepHealthy, func(ctx context.Context) (string, error) {
		if out, err := takeOut(ctx); out || err != nil {
			return "", err
		}
		why, err := n.EtcdHealthy(ctx)
		if why != "" || err != nil {
			return why, err
		}
		// The operator takes etcd out of both nodes' static pods: both agents must be there to
		// take over.
		if _, peer, err := n.Roles(ctx); err != nil || peer == "Stopped" {
			return fmt.Sprintf("the peer's etcd agent is not started (%s, %v): it could not take over its etcd", peer, err), nil
		}
		if err := op.Ready(ctx); err != nil {
			return "the API does not answer its readiness check: " + err.Error(), nil
		}
		return "", nil
	}); err != nil {
		return err
	}
	if err := s.wait(ctx, StepTold, func(ctx context.Context) (string, error) {
		if err := op.SetTrue(ctx, ConditionReady, ReasonReady, "Pacemaker's etcd agent is ready to take over the etcd container"); err != nil {
			return "setting " + ConditionReady + ": " + err.Error(), nil
		}
		if told.IsZero() {
			told = time.Now()
			return "", fsutil.WriteTime(s.o.ToldFile, told)
		}
		return "", nil
	}); err != nil {
		return err
	}
	return s.wait(ctx, StepInstaller, func(ctx context.Context) (string, error) {
		if _, err := takeOut(ctx); err != nil {
			return "", err
		}
		installer, err := staticpod.InstallerEtcd(s.o.StaticPodManifest)
		if err != nil {
			return err.Error(), nil
		}
		if installer {
			// The operator acts on the condition on a DualReplica cluster only
			// (ceohelpers.IsExternalEtcdCluster): elsewhere this wait never ends, and says so.
			return "the operator has not rolled out the static pod without etcd on this node yet " +
				"(it does so on a DualReplica cluster only)", nil
		}
		// The agent may have started its member already (its own monitor saw the manifest change):
		// then the ports are its.
		if self, _, err := n.Roles(ctx); err == nil && self == "Promoted" {
			return "", nil
		}
		if port := n.BusyPort(); port != "" {
			return "the installer's etcd still holds " + port + " (the kubelet stops its container)", nil
		}
		return "", nil
	})
}

// takeOverWhy says why this node takes the installer's etcd out of its static pod itself ("" when
// it does not): a node failed during the handover, and the operator, which rolls no revision
// out without two healthy members, will not. Only where the operator renders its static pod
// without etcd, which the peer's agent having run etcd proves (the peer's installer etcd goes
// only by the operator's rollout, or by this rule on the peer, with the same proof): elsewhere
// the operator's next revision would bring the container back beside the agent's etcd. Then
// either the peer was fenced after the operator was told (it is proven off; this node serves
// alone once its agent has the data), or the peer's agent serves etcd without this node's
// member (it ran alone while this node was away, so the installer's etcd here can never
// rejoin; the agent joins the peer instead).
func (s *stepper) takeOverWhy(ctx context.Context, n Node, told time.Time) string {
	if handed, err := n.PeerHandedOver(ctx); err != nil || !handed {
		return ""
	}
	if !told.IsZero() {
		if fenced, err := n.PeerFencedAfter(ctx, told); err == nil && fenced {
			return "the peer, already handed over, was fenced after the operator was told, and the operator rolls nothing out without two healthy members"
		}
	}
	if why, err := n.PeerServesWithout(ctx); err == nil && why != "" {
		return why
	}
	return ""
}

// stepper runs the steps and records where the node stands.
type stepper struct {
	o Options
}

// wait records step as the one this node waits for, then polls check (it says why it still
// waits, "" when the step is reached) for at most Options.Wait. An error of check ends the run.
func (s *stepper) wait(ctx context.Context, step string, check func(context.Context) (string, error)) error {
	st := State{Step: step, Since: time.Now().UTC()}
	wctx, cancel := context.WithTimeout(ctx, s.o.Wait)
	defer cancel()
	err := poll.Every(wctx, s.o.Interval, func(ctx context.Context) (bool, error) {
		why, err := check(ctx)
		if err != nil || why == "" {
			return true, err
		}
		if why != st.Waiting {
			st.Waiting = why
			fmt.Fprintf(s.o.Out, "handover: %s: waiting: %s\n", step, why)
			if err := s.record(st); err != nil {
				return false, err
			}
		}
		return false, nil
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("handover: %s: gave up after %v: %s", step, s.o.Wait, st.Waiting)
	}
	if err != nil {
		return fmt.Errorf("handover: %s: %w", step, err)
	}
	fmt.Fprintf(s.o.Out, "handover: %s: reached\n", step)
	return nil
}

func (s *stepper) record(st State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.o.StateFile), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(s.o.StateFile, append(data, '\n'), 0o644)
}
