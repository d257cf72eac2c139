package poweroffagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// Exit codes, as the fence agents' library uses them.
const (
	exitOK    = 0
	exitError = 1
	exitOff   = 2 // status: the target is off
)

const usage = "usage: " + Name + " [-o|--action ACTION]  (options as name=value lines on standard input; actions: off reboot status monitor list metadata validate-all)"

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
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("agent", Name)
	action, err := actionFromArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, usage)
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
	o, err := Parse(vals)
	if err != nil {
		log.Error("invalid options", "err", bmc.Redact(err.Error(), vals["password"]))
		return exitError
	}
	if !slices.Contains(Actions, o.Action) {
		log.Error("unsupported action: this agent never powers a node", "action", o.Action)
		return exitError
	}
	log = log.With("action", o.Action, "system", o.Credential.Address.SystemPath)
	switch o.Action {
	case "metadata":
		md, err := Metadata()
		if err != nil {
			log.Error("metadata", "err", err)
			return exitError
		}
		stdout.Write(md)
		return exitOK
	case "validate-all", "list":
		return exitOK
	case "status", "monitor":
		r := bmc.ReadPower(ctx, o.Credential, bmc.Options{Timeout: o.ReadTimeout, BasicAuth: true})
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
	// off and reboot: succeed only on proof.
	off, reason := bmc.ProveOff(ctx, o.Credential, o.Gap, bmc.Options{Timeout: o.ReadTimeout, BasicAuth: true}, func(r bmc.PowerRead) {
		if r.Err != nil {
			log.Info("read", "err", r.Err)
		} else {
			log.Info("read", "power_state", r.State)
		}
	})
	if !off {
		log.Error("not proven off: the next fencing level decides", "reason", reason)
		return exitError
	}
	log.Info("proven off: the node stays off", "reason", reason)
	return exitOK
}
