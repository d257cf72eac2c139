// Package fencerun runs a fence agent (fence_redfish) exactly as Pacemaker's fencer does: the
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

// DefaultAgent is where Debian and RHEL install fence_redfish.
const DefaultAgent = "/usr/sbin/fence_redfish"

// Redfish describes one fence_redfish call.
type Redfish struct {
	Agent        string // default DefaultAgent
	Action       string // status, on, off, reboot, monitor, list
	Credential   bmc.Credential
	Discover     bool // leave systems_uri out: fence_redfish takes the last member of Systems
	PowerTimeout int  // seconds; 0 keeps the agent's default
}

// Option is one fence_redfish parameter.
type Option struct{ Name, Value string }

// Options are the agent's parameters, by the names a Pacemaker stonith device uses, in a fixed
// order, without the action.
func (r Redfish) Options() ([]Option, error) {
	a := r.Credential.Address
	if a.Scheme != "https" {
		return nil, fmt.Errorf("fence_redfish speaks HTTPS only, not %s", a.Scheme)
	}
	ip := a.Host
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]" // fence_redfish builds https://<ip>:<port> itself
	}
	opts := []Option{{"ip", ip}, {"ipport", strconv.Itoa(a.Port)}, {"username", r.Credential.Username},
		{"password", r.Credential.Password}}
	if !r.Discover {
		opts = append(opts, Option{"systems_uri", a.SystemPath})
	}
	if !r.Credential.VerifyCertificate {
		opts = append(opts, Option{"ssl_insecure", "1"})
	}
	if r.PowerTimeout > 0 {
		opts = append(opts, Option{"power_timeout", strconv.Itoa(r.PowerTimeout)})
	}
	for _, o := range opts {
		if strings.ContainsAny(o.Value, "\n\r") {
			return nil, fmt.Errorf("fence_redfish option %s must not contain line breaks", o.Name)
		}
	}
	return opts, nil
}

// Stdin is what the agent reads: the action, then Options.
func (r Redfish) Stdin() (string, error) {
	opts, err := r.Options()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if strings.ContainsAny(r.Action, "\n\r") {
		return "", errors.New("fence_redfish options must not contain line breaks")
	}
	b.WriteString("action=" + r.Action + "\n")
	for _, o := range opts {
		b.WriteString(o.Name + "=" + o.Value + "\n")
	}
	return b.String(), nil
}

// Result is the agent's exit code and its output with the password redacted.
type Result struct {
	Code   int
	Output string
}

// Command is the agent's process: no arguments, the options on standard input. The CA file,
// when set, reaches the agent's HTTP library through REQUESTS_CA_BUNDLE (fence_redfish verifies
// with python-requests).
func (r Redfish) Command(ctx context.Context) (*exec.Cmd, error) {
	in, err := r.Stdin()
	if err != nil {
		return nil, err
	}
	agent := r.Agent
	if agent == "" {
		agent = DefaultAgent
	}
	cmd := exec.CommandContext(ctx, agent)
	cmd.Stdin = strings.NewReader(in)
	cmd.Env = os.Environ()
	if r.Credential.CAFile != "" {
		cmd.Env = append(cmd.Env, "REQUESTS_CA_BUNDLE="+r.Credential.CAFile)
	}
	return cmd, nil
}

// Run runs the agent.
func (r Redfish) Run(ctx context.Context) (Result, error) {
	cmd, err := r.Command(ctx)
	if err != nil {
		return Result{}, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := Result{Output: bmc.Redact(out.String(), r.Credential.Password)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		res.Code = ee.ExitCode()
	case err != nil:
		return res, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return res, nil
}
