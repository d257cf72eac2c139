// Package fencecheck verifies a BMC credential the two ways fencing depends on: gofish (what the
// node's own tools use) and the second fencing level's agent's status call, exactly as
// Pacemaker will make it.
package fencecheck

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logfmt/logfmt"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/identity"
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
	Agent     string        // the second level's agent (fencerun.DefaultAgent)
	BasicAuth bool          // gofish with Basic auth instead of a session

	// Target, when set, is the node whose BMC the credential names: a third check tells
	// whether the BMC's system is that node's machine (identity.Verify against Machines, the
	// nodes' published identities).
	Target   string
	Machines map[string]identity.Identity
	// Member: Target is a live Corosync member, so its BMC must not say Off.
	Member bool
	// UnverifiedIdentity accepts a BMC system that cannot be compared with Target's machine
	// (the node configuration's unverifiedIdentity); one that is another machine still fails.
	UnverifiedIdentity bool
	// Roots are the CAs an unchecked BMC's certificate is tried against, to tell whether
	// verification would check it (nil: the system's).
	Roots *x509.CertPool
}

// Check runs the checks; it never returns early, so every line always appears: redfish, the
// agent's, and identity when there is a Target.
func Check(ctx context.Context, c bmc.Credential, o Options) []Result {
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	api, id := checkGofish(ctx, c, o)
	results := []Result{api, checkFenceAgent(ctx, c, o)}
	if o.Target != "" {
		results = append(results, id)
	}
	return results
}

// checkGofish reads the system through the Redfish API and, with a Target, tells whether it is
// that node's machine (id, meaningless without a Target).
func checkGofish(ctx context.Context, c bmc.Credential, o Options) (api, id Result) {
	api, id = Result{Check: "redfish"}, Result{Check: "identity", Detail: "the system could not be read"}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cl, err := bmc.Connect(ctx, c, bmc.Options{Timeout: o.Timeout, BasicAuth: o.BasicAuth})
	if errors.Is(err, bmc.ErrUnchecked) && c.Address.Scheme == "https" {
		served, readErr := bmc.ServedCertificate(ctx, c.Address, o.Timeout, o.Roots)
		switch {
		case readErr != nil:
			api.Detail = fmt.Sprintf("%v; its certificate could not be read: %v", err, readErr)
		case served.Untrusted != nil:
			api.Detail = fmt.Sprintf("%v; the certificate it serves has SHA-256 %s (check it against the BMC's own console before pinning it); "+
				"this node's CAs do not verify it: %v", err, served.Pin, served.Untrusted)
		default:
			api.Detail = fmt.Sprintf("%v; the certificate it serves has SHA-256 %s, and this node's CAs verify it for %s: "+
				"certificate verification would check this BMC as it stands", err, served.Pin, c.Address.Host)
		}
		return api, id
	}
	if err != nil {
		api.Detail = bmc.Redact(err.Error(), c.Password)
		return api, id
	}
	defer cl.Close()
	sys, err := cl.System()
	if err != nil {
		api.Detail = bmc.Redact(err.Error(), c.Password)
		return api, id
	}
	api.OK, api.Detail = true, fmt.Sprintf("system %s (%s) is %s", sys.ID, sys.Name, sys.PowerState)
	if o.Target == "" {
		return api, id
	}
	macs, err := cl.MACs(sys)
	if err != nil {
		id.Detail = bmc.Redact(err.Error(), c.Password)
		return api, id
	}
	machine := identity.New(sys.UUID, macs)
	switch err := identity.Verify(o.Target, machine, o.Machines); {
	case errors.Is(err, identity.ErrNothingToCompare) && o.UnverifiedIdentity:
		id.OK, id.Detail = true, "not checked (unverifiedIdentity): "+err.Error()
	case err != nil:
		id.Detail = err.Error()
	case o.Member && sys.PowerState == redfish.OffPowerState:
		id.Detail = fmt.Sprintf("the BMC says %s is Off while it is a live Corosync member: not its BMC", o.Target)
	default:
		id.OK, id.Detail = true, fmt.Sprintf("system %s is %s's machine (%s)", sys.ID, o.Target, machine)
	}
	return api, id
}

func checkFenceAgent(ctx context.Context, c bmc.Credential, o Options) Result {
	call := fencerun.Call{Agent: o.Agent, Action: "status"}
	if call.Agent == "" {
		call.Agent = fencerun.DefaultAgent
	}
	r := Result{Check: filepath.Base(call.Agent)}
	opts, err := fencerun.BMCOptions(c)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	call.Options = opts
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res, err := call.Run(ctx)
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

// verdict is the agent's last line: its answer (Status: On), or, from its log line, why it
// failed.
func verdict(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "(no output)"
	}
	fields := map[string]string{}
	d := logfmt.NewDecoder(strings.NewReader(last))
	for d.ScanRecord() {
		for d.ScanKeyval() {
			fields[string(d.Key())] = string(d.Value())
		}
	}
	if d.Err() != nil || fields["msg"] == "" {
		return last
	}
	if e := fields["err"]; e != "" {
		return fields["msg"] + ": " + e
	}
	return fields["msg"]
}
