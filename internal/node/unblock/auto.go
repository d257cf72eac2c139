package unblock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencewait"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// AloneSinceFile records when this node was first seen waiting alone. It is on /run, so a
// reboot starts the wait again.
const AloneSinceFile = "/run/tnf/alone-since"

// DecisionsFile counts the passes that asked the BMC, by outcome, since the node booted (on
// /run), for the metrics.
const DecisionsFile = "/run/tnf/auto-unblock-decisions.json"

// Outcomes of a pass that asked the BMC.
const (
	OutcomeConfirmed = "confirmed" // the BMC proved the peer off: confirmed down
	OutcomeRefused   = "refused"   // the BMC did not prove it: still waiting
)

// Outcomes are every outcome, in the order the metrics list them.
var Outcomes = []string{OutcomeConfirmed, OutcomeRefused}

// ReadDecisions reads DecisionsFile's counts (none before the first pass that asked the BMC).
func ReadDecisions(path string) (map[string]int, error) {
	counts := map[string]int{}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return counts, nil
	}
	if err == nil {
		if err = json.Unmarshal(data, &counts); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	return counts, err
}

// Auto is one pass of auto-unblock (a timer runs it).
type Auto struct {
	Config        clusterconfig.Config
	Peer          clusterconfig.Node
	Tools         pcmk.Tools
	DecisionsFile string        // default DecisionsFile
	StateFile     string        // default AloneSinceFile
	Gap           time.Duration // between the two BMC reads; default 5 s
	Log           *slog.Logger
	Out           io.Writer // Confirm's steps
}

// ErrNotProven is returned when the BMC did not prove the peer off: the node keeps waiting.
var ErrNotProven = errors.New("the peer is not proven off: still waiting")

// Run decides and, when the peer's BMC proves it off, confirms it down. It returns nil when
// there is nothing to do yet, ErrNotProven when the BMC was asked and did not prove it.
func (a Auto) Run(ctx context.Context) error {
	if a.StateFile == "" {
		a.StateFile = AloneSinceFile
	}
	if a.DecisionsFile == "" {
		a.DecisionsFile = DecisionsFile
	}
	if a.Gap == 0 {
		a.Gap = 5 * time.Second
	}
	m, err := a.Tools.Members(ctx)
	if err != nil {
		return fmt.Errorf("reading the Corosync membership: %w", err)
	}
	s := Situation{Enabled: a.Config.AutoUnblock.Enabled, After: a.Config.AutoUnblock.After.Duration,
		PeerMember: m.Nodes[a.Peer.Name], WaitingForAll: m.WaitingForAll}
	if !s.PeerMember && !s.WaitingForAll {
		// Quorate alone: is the peer's fencing failing? Without Pacemaker's answer, not proven.
		if st, err := a.Tools.Status(ctx); err == nil {
			_, s.FencingFails = fencewait.Find(st, a.Peer.Name)
		}
	}
	if s.PeerMember || !(s.WaitingForAll || s.FencingFails) {
		_ = os.Remove(a.StateFile)
	} else if s.AloneFor, err = a.aloneFor(); err != nil {
		return err
	}
	ask, reason := ShouldAskBMC(s)
	a.Log.Info("decision", "ask_bmc", ask, "reason", reason)
	if !ask {
		return nil
	}
	cred, err := a.Peer.Credential()
	if err != nil {
		return err
	}
	off, reason := bmc.ProveOff(ctx, cred, a.Gap, bmc.Options{Timeout: 10 * time.Second, UserAgent: "tnfctl auto-unblock"}, nil, func(r bmc.PowerRead) {
		a.Log.Info("bmc read", "peer", a.Peer.Name, "power_state", r.State, "error", errString(r.Err))
	})
	a.Log.Info("decision", "peer_off", off, "reason", reason)
	if !off {
		a.count(OutcomeRefused)
		return ErrNotProven
	}
	if err := Confirm(ctx, a.Tools, a.Peer.Name, a.Out); err != nil {
		return err
	}
	a.count(OutcomeConfirmed)
	return nil
}

// count adds a pass's outcome to DecisionsFile. Only the metrics read it: a failure is logged.
func (a Auto) count(outcome string) {
	counts, err := ReadDecisions(a.DecisionsFile)
	if err == nil {
		counts[outcome]++
		var data []byte
		if data, err = json.Marshal(counts); err == nil {
			if err = os.MkdirAll(filepath.Dir(a.DecisionsFile), 0o755); err == nil {
				err = fsutil.WriteFileAtomic(a.DecisionsFile, data, 0o644)
			}
		}
	}
	if err != nil {
		a.Log.Error("counting the decision for the metrics", "outcome", outcome, "err", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// AloneSince is when a pass first saw this node waiting alone (kept in path), false when the last
// pass did not see it waiting, or before the first pass.
func AloneSince(path string) (time.Time, bool) {
	since, ok, err := fsutil.ReadTime(path)
	return since, ok && err == nil
}

// aloneFor is the time since the first pass that saw this node waiting alone.
func (a Auto) aloneFor() (time.Duration, error) {
	if since, ok := AloneSince(a.StateFile); ok {
		return time.Since(since), nil
	}
	return 0, fsutil.WriteTime(a.StateFile, time.Now())
}
