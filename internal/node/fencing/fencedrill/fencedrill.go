// Package fencedrill is the fencing drill's logic (tnfctl fence-drill): when a node may fence its
// healthy peer for real, and when the fencing of a node was last proven. Fencing that has never
// fired is not known to work: a wrong credential, a BMC that takes the request and does nothing,
// a fence device on the wrong machine all show only on the day of a fault.
package fencedrill

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// PropProven is the cluster property that records when a drill last fenced node, in Unix
// seconds. Pacemaker's fencing history proves it too, but the history lives only in the
// fencers' memory: a restart of both nodes empties it. A property, not an attribute of the
// node: crm_mon shows no attribute of a node that is offline.
func PropProven(node string) string { return "tnf-fence-proven-" + node }

// MaxAge is how long a proof lasts: the field's guidance is a drill every three to six months
// (the two-node enhancement), and a credential or firmware change meanwhile is what a drill finds.
const MaxAge = 90 * 24 * time.Hour

// ErrRefused is every refusal of a drill: it would be unsafe now.
var ErrRefused = errors.New("fence drill refused")

// Facts are what the drill's refusal is decided on.
type Facts struct {
	// State and Summary are tnfctl status's.
	State   health.State
	Summary string
	// Guest is why the cluster-etcd-operator runs Pacemaker here ("" on the layer's own cluster).
	Guest string
	// UncheckedBMC are the fence devices that take any certificate from their BMC;
	// ConfigurationError why the CIB's configuration, which says so, could not be read.
	UncheckedBMC       []string
	ConfigurationError string
	// Rollout is what MCO rolls out on the nodes ("" none), Rollout's answer.
	Rollout string
}

// Refusal says why the drill must not fence the peer now (nil: it may). Only a pair that is
// whole may lose a node on purpose: a degraded pair would lose the control plane, an
// administrator's setting would keep Pacemaker from recovering, a rollout would reboot the
// survivor meanwhile, and an unchecked BMC's "done" proves nothing.
func Refusal(f Facts) error {
	switch {
	case f.Guest != "":
		return fmt.Errorf("%w: on a guest the cluster-etcd-operator owns the fence devices and etcd's recovery (%s); the drill "+
			"runs on the layer's own cluster", ErrRefused, f.Guest)
	case f.State != health.Healthy:
		return fmt.Errorf("%w: both nodes must be healthy, and tnfctl status says %s: %s", ErrRefused, f.State, f.Summary)
	case f.ConfigurationError != "":
		return fmt.Errorf("%w: the CIB's configuration could not be read, so whether every fence device checks its BMC is "+
			"not known: %s", ErrRefused, f.ConfigurationError)
	case len(f.UncheckedBMC) > 0:
		return fmt.Errorf("%w: %s take any certificate from their BMC, so their fencing proves nothing "+
			"(tnfctl status says how to make them check it)", ErrRefused, strings.Join(f.UncheckedBMC, ", "))
	case f.Rollout != "":
		return fmt.Errorf("%w: MCO is rolling a configuration out (%s): drill once the pool is updated", ErrRefused, f.Rollout)
	}
	return nil
}

// The machine-config-daemon's annotations on each Node (MCO's pkg/daemon/constants).
const (
	annotationCurrent = "machineconfiguration.openshift.io/currentConfig"
	annotationDesired = "machineconfiguration.openshift.io/desiredConfig"
	annotationState   = "machineconfiguration.openshift.io/state"
	stateDone         = "Done"
)

// Rollout says what MCO rolls out on the named nodes ("" nothing): a node whose daemon is not
// Done, or whose desired configuration is not its current one (MCO set the new one, the daemon
// has not begun). A node without its Node object or the daemon's annotations cannot be told
// about, and is named too.
func Rollout(nodes []corev1.Node, names []string) string {
	var busy []string
	for _, name := range names {
		i := slices.IndexFunc(nodes, func(n corev1.Node) bool { return n.Name == name })
		if i < 0 {
			busy = append(busy, name+" has no Node object")
			continue
		}
		a := nodes[i].Annotations
		switch state, current, desired := a[annotationState], a[annotationCurrent], a[annotationDesired]; {
		case state == "" || current == "":
			busy = append(busy, name+" has no machine-config-daemon state")
		case state != stateDone:
			busy = append(busy, fmt.Sprintf("%s's machine-config-daemon is %s", name, state))
		case desired != current:
			busy = append(busy, fmt.Sprintf("%s is to go from %s to %s", name, current, desired))
		}
	}
	return strings.Join(busy, "; ")
}

// Proven is when the fencing of target last succeeded: the newest of its drill's record (the
// cluster's properties, cfg; nil when they could not be read) and the successes of a device in
// Pacemaker's fencing history (a real fault's fencing proves the path as well as a drill; an
// administrator's confirmation proves nothing of it). False when neither shows one.
func Proven(st pcmk.Status, cfg *pcmk.Configuration, target string) (time.Time, bool) {
	var last time.Time
	for _, e := range st.Fencing {
		if at, ok := e.CompletedAt(); ok && e.Target == target && e.Status == pcmk.FenceSucceeded && e.Delegate != pcmk.ByHuman && at.After(last) {
			last = at
		}
	}
	if cfg != nil {
		if s, err := strconv.ParseInt(cfg.Properties[PropProven(target)], 10, 64); err == nil && s > 0 && time.Unix(s, 0).After(last) {
			last = time.Unix(s, 0)
		}
	}
	return last, !last.IsZero()
}
