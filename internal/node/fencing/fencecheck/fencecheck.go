// Package fencecheck verifies a BMC credential the two ways fencing depends on: gofish (what the
// node's own tools use) and the real fence_redfish status call, exactly as Pacemaker will make it.
package fencecheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
)

// Result is one check's outcome.
type Result struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (r Result) String() string {
	if r.OK {
		return r.Check + ": ok: " + r.Detail
	}
	return r.Check + ": FAILED: " + r.Detail
}

// Options tune the checks.
type Options struct {
	Timeout   time.Duration // per check; default 20 s
	Agent     string        // fence_redfish path
	BasicAuth bool          // gofish with Basic auth instead of a session
}

// Check runs both checks; it never returns early, so both lines always appear.
func Check(ctx context.Context, c bmc.Credential, o Options) []Result {
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	return []Result{checkGofish(ctx, c, o), checkFenceAgent(ctx, c, o)}
}

func checkGofish(ctx context.Context, c bmc.Credential, o Options) Result {
	r := Result{Check: "redfish"}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cl, err := bmc.Connect(ctx, c, bmc.Options{Timeout: o.Timeout, BasicAuth: o.BasicAuth})
	if err != nil {
		r.Detail = bmc.Redact(err.Error(), c.Password)
		return r
	}
	defer cl.Close()
	sys, err := cl.System()
	if err != nil {
		r.Detail = bmc.Redact(err.Error(), c.Password)
		return r
	}
	r.OK, r.Detail = true, fmt.Sprintf("system %s (%s) is %s", sys.ID, sys.Name, sys.PowerState)
	return r
}

func checkFenceAgent(ctx context.Context, c bmc.Credential, o Options) Result {
	r := Result{Check: "fence_redfish"}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res, err := fencerun.Redfish{Agent: o.Agent, Action: "status", Credential: c}.Run(ctx)
	switch {
	case ctx.Err() != nil:
		r.Detail = fmt.Sprintf("no answer within %v", o.Timeout)
	case err != nil:
		r.Detail = bmc.Redact(err.Error(), c.Password)
	case res.Code == 0 || res.Code == 2: // status: 0 on, 2 off
		r.OK, r.Detail = true, verdict(res.Output)
	default:
		r.Detail = fmt.Sprintf("exit %d: %s", res.Code, verdict(res.Output))
	}
	return r
}

// verdict is the agent's last meaningful line, without the timestamp and the generic usage hint
// fence agents add after an error.
func verdict(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if _, msg, ok := strings.Cut(l, " ERROR: "); ok {
			l = "ERROR: " + msg
		}
		if l != "" && !strings.Contains(l, "Please use '-h' for usage") {
			return l
		}
	}
	return "(no output)"
}
