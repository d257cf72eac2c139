package fenceagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/powerwatch"
)

// Exit codes, as the fence agents' library uses them.
const (
	exitOK    = 0
	exitError = 1
	exitOff   = 2 // status: the target is off
)

// Agent is one of the layer's stonith agents.
type Agent struct {
	// Name is the agent's name: Pacemaker finds fence agents as /usr/sbin/<name>.
	Name                string
	shortdesc, longdesc string
	timings             []timing
	// powerWatch (PowerOff) is where the power watch keeps its reads.
	powerWatch string
	// fence carries out off and reboot and returns the exit code.
	fence func(ctx context.Context, a Agent, o Options, log *slog.Logger) int
}

// Defaults. A first-level read may take 3 s: one that does not answer costs the fencing at most
// that before the second level runs, and the race winner's delay outlasts it (clusterconfig.
// SizedWinner); the power watch, which reads from the link's loss on, gives a slower BMC the
// time to prove its node off. A second-level request may take 5 s: a BMC that answers in 3 s
// still powers its node off.
const (
	FirstLevelReadTimeout  = 3 * time.Second
	SecondLevelReadTimeout = 5 * time.Second
	DefaultGap             = time.Second
	DefaultPowerTimeout    = 20 * time.Second // fence_redfish's power_timeout
)

// readTimeout is the read_timeout parameter with its default.
func readTimeout(def time.Duration) timing {
	return timing{"read_timeout", "Seconds each request to the BMC may take, connection included", def,
		func(o *Options) *time.Duration { return &o.ReadTimeout }}
}

// PowerOff is fence_tnf_poweroff, the first fencing level.
var PowerOff = Agent{
	Name:      "fence_tnf_poweroff",
	shortdesc: "Fence a node that its Redfish BMC reports powered off",
	longdesc: "The first fencing level of a two-node cluster: succeeds only when the target's BMC answers " +
		"PowerState Off on two reads, gap seconds apart; On, any other state, an error or no answer within read_timeout " +
		"fails at once, so the next level (fence_tnf_redfish with the race delay) runs. It never powers a node on or off: " +
		"a node it fences stays off.",
	timings: []timing{{"gap", "Seconds between the two PowerState reads", DefaultGap, func(o *Options) *time.Duration { return &o.Gap }},
		readTimeout(FirstLevelReadTimeout)},
	powerWatch: powerwatch.Dir,
	fence:      proveOff,
}

// Redfish is fence_tnf_redfish, the second fencing level.
var Redfish = Agent{
	Name:      "fence_tnf_redfish",
	shortdesc: "Fence a node by powering it off through its Redfish BMC",
	longdesc: "The second fencing level of a two-node cluster: ComputerSystem.Reset ForceOff through the target's BMC, " +
		"done as soon as the BMC says PowerState Off (read every 0.2 s, up to power_timeout); a reboot then powers the " +
		"node on again (Reset On). Like fence_redfish, but it talks only to a BMC whose certificate is checked: pinned " +
		"(ssl_fingerprint) or verified (with ssl_ca_file, or the system's CAs), unless insecure_skip_certificate_check is set.",
	timings: []timing{readTimeout(SecondLevelReadTimeout), {"power_timeout", "Seconds to wait for PowerState Off after the reset", DefaultPowerTimeout,
		func(o *Options) *time.Duration { return &o.PowerTimeout }}},
	fence: powerOff,
}

// Actions are what the agents answer; "on" is absent: Pacemaker would take an agent that offers
// it for one that can unfence, and a node fenced off stays off until its reboot or an
// administrator.
var Actions = []string{"off", "reboot", "status", "monitor", "list", "metadata", "validate-all"}

func (a Agent) usage() string {
	return "usage: " + a.Name + " [-o|--action ACTION]  (options as name=value lines on standard input; actions: " + strings.Join(Actions, " ") + ")"
}

// actionFromArgs is the action named on the command line ("" when none). Only the action may
// be given there: pcs asks `-o metadata`; the password must never be an argument.
func actionFromArgs(args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", nil
	case len(args) == 2 && (args[0] == "-o" || args[0] == "--action"):
		return args[1], nil
	case len(args) == 1:
		if a, ok := strings.CutPrefix(args[0], "--action="); ok && a != "" {
			return a, nil
		}
	}
	return "", errors.New("only the action may be given as an argument (-o ACTION): options, the password among them, come on standard input")
}

// Main runs the agent and returns its exit code.
func (a Agent) Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("agent", a.Name)
	action, err := actionFromArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, a.usage())
		log.Error("bad arguments", "err", err)
		return exitError
	}
	vals := map[string]string{}
	if action != "metadata" {
		if vals, err = ReadStdin(stdin); err != nil {
			log.Error("reading options", "err", err)
			return exitError
		}
	}
	if action != "" {
		vals["action"] = action
	}
	o, err := a.Parse(vals)
	if err != nil {
		log.Error("invalid options", "err", bmc.Redact(err.Error(), vals["password"]))
		return exitError
	}
	if !slices.Contains(Actions, o.Action) {
		log.Error("unsupported action: this agent never powers a node on", "action", o.Action)
		return exitError
	}
	log = log.With("action", o.Action, "system", o.Credential.Address.SystemPath)
	switch o.Action {
	case "metadata":
		md, err := a.Metadata()
		if err != nil {
			log.Error("metadata", "err", err)
			return exitError
		}
		stdout.Write(md)
		return exitOK
	case "validate-all", "list":
		return exitOK
	case "status", "monitor":
		r := bmc.ReadPower(ctx, o.Credential, a.bmcOptions(o))
		if r.Err != nil {
			log.Error("the BMC did not answer", "err", r.Err)
			return exitError
		}
		fmt.Fprintf(stdout, "Status: %s\n", r.State)
		if o.Action == "status" && r.State == "Off" {
			return exitOff
		}
		return exitOK
	}
	return a.fence(ctx, a, o, log)
}

func (a Agent) bmcOptions(o Options) bmc.Options {
	return bmc.Options{Timeout: o.ReadTimeout, UserAgent: a.Name}
}

// logRead logs one read of the BMC.
func logRead(log *slog.Logger) func(bmc.PowerRead) {
	return func(r bmc.PowerRead) {
		if r.Err != nil {
			log.Info("read", "err", r.Err)
		} else {
			log.Info("read", "power_state", r.State)
		}
	}
}

// proveOff is the first level's off and reboot: success only on proof, from the power watch's
// reads of the BMC since the node looked gone and its own. Where its own reads got no answer (a
// BMC slower than read_timeout) and none answered anything but Off, the watch's reads are looked
// at once more: a read it began earlier, with its longer timeout, may have come in meanwhile.
func proveOff(ctx context.Context, a Agent, o Options, log *slog.Logger) int {
	path := powerwatch.Path(a.powerWatch, o.Credential)
	watched := func() []bmc.PowerRead {
		rec, ok, err := powerwatch.Load(path)
		switch {
		case err != nil:
			log.Warn("the power watch's reads are not taken", "err", err)
		case ok:
			usable := powerwatch.Usable(rec, o.Credential, time.Now(), powerwatch.BootClock())
			log.Info("the power watch's reads", "since_link_lost", len(rec.Reads), "usable", len(usable))
			return usable
		}
		return nil
	}
	onlyOff := true
	seen := logRead(log)
	off, reason := bmc.ProveOff(ctx, o.Credential, o.Gap, a.bmcOptions(o), watched(), func(r bmc.PowerRead) {
		seen(r)
		onlyOff = onlyOff && (r.Err != nil || r.State == "Off")
	})
	if !off && onlyOff {
		if later, why := bmc.ProvenOff(watched(), o.Gap); later {
			off, reason = true, why+", read by the power watch"
		}
	}
	if !off {
		log.Error("not proven off: the next fencing level decides", "reason", reason)
		return exitError
	}
	log.Info("proven off: the node stays off", "reason", reason)
	return exitOK
}

// powerOff is the second level's off and reboot: ForceOff, done once the BMC says Off; a reboot
// then powers the node on. A failed power-on is no failed fencing: the node is off, which is
// what fencing needs, and it stays off until someone powers it on.
func powerOff(ctx context.Context, a Agent, o Options, log *slog.Logger) int {
	s, err := bmc.OpenSystem(ctx, o.Credential, a.bmcOptions(o))
	if err != nil {
		log.Error("not fenced", "err", err)
		return exitError
	}
	defer s.Close()
	began := time.Now()
	powerCtx, cancel := context.WithTimeout(ctx, o.PowerTimeout)
	err = s.ForceOff(powerCtx, logRead(log))
	cancel()
	if err != nil {
		log.Error("not fenced", "err", err)
		return exitError
	}
	log.Info("fenced: the BMC says Off", "took", time.Since(began).Round(time.Millisecond))
	if o.Action == "reboot" {
		if err := s.PowerOn(); err != nil {
			log.Warn("fenced, but the power-on failed: the node stays off until it is powered on", "err", err)
		} else {
			log.Info("powered on")
		}
	}
	return exitOK
}
