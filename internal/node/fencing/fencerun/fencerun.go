// Package fencerun gives the layer's fence agents (fence_tnf_poweroff, fence_tnf_redfish) their
// options for a BMC credential, and runs a fence agent exactly as Pacemaker's fencer does: the
// options as name=value lines on standard input, so no secret ever appears in argv.
package fencerun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// AgentDir is where Pacemaker's fencer finds the fence agents.
const AgentDir = "/usr/sbin"

// DefaultAgent is the second fencing level's agent, the one that acts on a BMC's power.
const DefaultAgent = AgentDir + "/fence_tnf_redfish"

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

// DeviceCredential is the credential a Pacemaker fence device of fence_redfish or the layer's
// agents holds (params: its parameters, by BMCOptions's names and fence_redfish's aliases), so
// that it can be checked as the device will use it. The certificate is checked as the device
// checks it: pinned (ssl_fingerprint), verified (with ssl_ca_file, or the system's CAs), or not at
// all where ssl_insecure is set; a device that checks nothing is not opted out on its behalf
// (bmc.CheckTrust refuses it). Errors name the device and the parameter.
func DeviceCredential(id string, params map[string]string) (bmc.Credential, error) {
	param := func(names ...string) string {
		for _, n := range names {
			if v, ok := params[n]; ok {
				return v
			}
		}
		return ""
	}
	for _, p := range []struct{ names []string }{{[]string{"ip", "ipaddr"}}, {[]string{"username", "login"}}, {[]string{"password", "passwd"}}, {[]string{"systems_uri", "systems-uri"}}} {
		if param(p.names...) == "" {
			return bmc.Credential{}, fmt.Errorf("fence device %s: %s: missing (pcs stonith config %s)", id, p.names[0], id)
		}
	}
	port := param("ipport")
	if port == "" {
		port = "443" // fence_redfish's default
	}
	host := strings.TrimSuffix(strings.TrimPrefix(param("ip", "ipaddr"), "["), "]")
	addr, err := bmc.ParseAddress("fence device "+id+": ip, ipport and systems_uri",
		"redfish+https://"+net.JoinHostPort(host, port)+param("systems_uri", "systems-uri"))
	if err != nil {
		return bmc.Credential{}, err
	}
	c := bmc.Credential{Address: addr, Username: param("username", "login"), Password: param("password", "passwd"),
		VerifyCertificate: !Bool(param("ssl_insecure", "ssl-insecure")), CAFile: param("ssl_ca_file")}
	if pin := param("ssl_fingerprint"); pin != "" {
		if c.PinSHA256, err = bmc.ParsePin(pin); err != nil {
			return bmc.Credential{}, fmt.Errorf("fence device %s: ssl_fingerprint: %w", id, err)
		}
	}
	return c, nil
}

// Bool reads a fence agent's boolean parameter as the fencing library reads its standard input
// (fencing.py, _parse_input_stdin): quotes around it dropped, these words true whatever their
// case, anything else not.
func Bool(v string) bool {
	switch strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)) {
	case "1", "yes", "on", "true":
		return true
	}
	return false
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
