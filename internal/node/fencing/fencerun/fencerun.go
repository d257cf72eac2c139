// Package fencerun gives the layer's fence agents (fence_tnf_poweroff, fence_tnf_redfish) their
// options for a BMC credential, and runs a fence agent exactly as Pacemaker's fencer does: the
// options as name=value lines on standard input, so no secret ever appears in argv.
package fencerun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// DefaultAgent is the second fencing level's agent, the one that acts on a BMC's power.
const DefaultAgent = "/usr/sbin/fence_tnf_redfish"

// Option is one fence agent parameter.
type Option struct{ Name, Value string }

// BMCOptions are the options the layer's agents take for credential c, by the names a
// Pacemaker stonith device uses, in a fixed order: where the BMC is, who logs in, and how its
// certificate is checked: the pin (ssl_fingerprint, which replaces the chain and name checks),
// else verification (with ssl_ca_file when the BMC has a CA of its own), else only by the
// administrator's opt-out (ssl_insecure with insecure_skip_certificate_check). A BMC whose
// certificate nothing checks, without that opt-out, has no options: no fencing path may talk
// to it (bmc.CheckTrust).
func BMCOptions(c bmc.Credential) ([]Option, error) {
	a := c.Address
	if a.Scheme != "https" {
		return nil, fmt.Errorf("the fence agents speak HTTPS only, not %s: the password would cross the network in the clear", a.Scheme)
	}
	if err := c.CheckTrust(); err != nil {
		return nil, err
	}
	ip := a.Host
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]" // the agents build https://<ip>:<port> themselves
	}
	opts := []Option{{"ip", ip}, {"ipport", strconv.Itoa(a.Port)}, {"username", c.Username},
		{"password", c.Password}, {"systems_uri", a.SystemPath}}
	switch {
	case c.PinSHA256 != "":
		opts = append(opts, Option{"ssl_fingerprint", c.PinSHA256})
	case c.VerifyCertificate && c.CAFile != "":
		opts = append(opts, Option{"ssl_ca_file", c.CAFile})
	case c.VerifyCertificate:
	default:
		opts = append(opts, Option{"ssl_insecure", "1"}, Option{"insecure_skip_certificate_check", "1"})
	}
	return opts, nil
}

// Call is one run of a fence agent.
type Call struct {
	Agent   string // default DefaultAgent
	Action  string // status, on, off, reboot, monitor, list
	Options []Option
	// Env is added to the agent's environment (fence_redfish takes a CA bundle only from
	// REQUESTS_CA_BUNDLE).
	Env []string
}

// Stdin is what the agent reads: the action, then the options.
func (c Call) Stdin() (string, error) {
	var b strings.Builder
	for _, o := range append([]Option{{"action", c.Action}}, c.Options...) {
		if strings.ContainsAny(o.Value, "\n\r") {
			return "", fmt.Errorf("fence agent option %s must not contain line breaks", o.Name)
		}
		b.WriteString(o.Name + "=" + o.Value + "\n")
	}
	return b.String(), nil
}

// Result is the agent's exit code and its output with the password redacted.
type Result struct {
	Code   int
	Output string
}

// Command is the agent's process: no arguments, the options on standard input.
func (c Call) Command(ctx context.Context) (*exec.Cmd, error) {
	in, err := c.Stdin()
	if err != nil {
		return nil, err
	}
	agent := c.Agent
	if agent == "" {
		agent = DefaultAgent
	}
	cmd := exec.CommandContext(ctx, agent)
	cmd.Stdin = strings.NewReader(in)
	cmd.Env = append(os.Environ(), c.Env...)
	return cmd, nil
}

// Run runs the agent.
func (c Call) Run(ctx context.Context) (Result, error) {
	cmd, err := c.Command(ctx)
	if err != nil {
		return Result{}, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := Result{Output: bmc.Redact(out.String(), c.password())}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		res.Code = ee.ExitCode()
	case err != nil:
		return res, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return res, nil
}

func (c Call) password() string {
	for _, o := range c.Options {
		if o.Name == "password" {
			return o.Value
		}
	}
	return ""
}
