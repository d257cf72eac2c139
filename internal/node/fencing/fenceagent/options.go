// Package fenceagent is the layer's two stonith agents, both of which talk to a node's Redfish
// BMC only when its certificate is checked (pinned, or verified with the system's CAs or the
// BMC's own CA), unless the administrator opted out by name:
//
//   - fence_tnf_poweroff (PowerOff), the first fencing level, fences a node only by proving,
//     through its BMC, that it is already powered off. A node that is off cannot write, so a
//     survivor that sees its peer's BMC report Off twice needs no race delay (that delay exists
//     only to settle a network split, where both nodes are on and this level fails on both
//     sides within seconds). It never powers anything: a node it fences stays off.
//   - fence_tnf_redfish (Redfish), the second level, powers the node off through its BMC
//     (ForceOff), returns as soon as the BMC says Off, and, for a reboot, powers it on again.
//
// Both speak the fence agents' protocol as Pacemaker's fencer calls them: the options as
// name=value lines on standard input, the action among them, never the password as an argument.
package fenceagent

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// Options are an agent's parameters, parsed.
type Options struct {
	Action     string
	Credential bmc.Credential
	// ReadTimeout bounds each request to the BMC, connection included.
	ReadTimeout time.Duration
	// Gap (PowerOff) is the least time between the two reads of a proof.
	Gap time.Duration
	// PowerTimeout (Redfish) bounds the wait for Off after the reset.
	PowerTimeout time.Duration
}

// timing is one of an agent's durations: its parameter, default and description.
type timing struct {
	name, desc string
	def        time.Duration
	field      func(*Options) *time.Duration
}

// ReadStdin reads name=value lines. Blank lines and comments are skipped; a later value
// replaces an earlier one, as in the fence agents' library.
func ReadStdin(r io.Reader) (map[string]string, error) {
	vals := map[string]string{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, value, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("standard input line %d: not name=value", line)
		}
		vals[strings.TrimSpace(name)] = value
	}
	return vals, sc.Err()
}

// Parse turns the options into Options; errors name the option. Options Pacemaker adds for
// every agent (nodename, port, plug, pcmk_*) and any other unknown name are ignored, as the fence
// agents' library ignores them.
func (a Agent) Parse(vals map[string]string) (Options, error) {
	o := Options{Action: vals["action"]}
	if o.Action == "" {
		o.Action = "reboot" // the fence agents' default
	}
	if needsBMC(o.Action) {
		if err := o.parseBMC(vals); err != nil {
			return Options{}, err
		}
	}
	for _, t := range a.timings {
		*t.field(&o) = t.def
		v, ok := vals[t.name]
		if !ok {
			continue
		}
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs <= 0 || secs > 60 {
			return Options{}, fmt.Errorf("%s: %q is not a number of seconds in (0, 60]", t.name, v)
		}
		*t.field(&o) = time.Duration(secs * float64(time.Second))
	}
	return o, nil
}

func needsBMC(action string) bool { return action != "metadata" && action != "list" }

func (o *Options) parseBMC(vals map[string]string) error {
	for _, name := range []string{"ip", "username", "password", "systems_uri"} {
		if vals[name] == "" {
			return fmt.Errorf("%s: required", name)
		}
	}
	host := strings.TrimSuffix(strings.TrimPrefix(vals["ip"], "["), "]")
	port := "443"
	if p, ok := vals["ipport"]; ok {
		port = p
	}
	addr, err := bmc.ParseAddress("ip, ipport and systems_uri", "redfish+https://"+net.JoinHostPort(host, port)+vals["systems_uri"])
	if err != nil {
		return err
	}
	insecure, err := flag(vals, "ssl_insecure")
	if err != nil {
		return err
	}
	o.Credential = bmc.Credential{Address: addr, Username: vals["username"], Password: vals["password"], VerifyCertificate: !insecure}
	if v := vals["ssl_ca_file"]; v != "" {
		if !filepath.IsAbs(v) {
			return fmt.Errorf("ssl_ca_file: %q is not an absolute path", v)
		}
		o.Credential.CAFile = v
	}
	if v := vals["ssl_fingerprint"]; v != "" {
		if o.Credential.PinSHA256, err = bmc.ParsePin(v); err != nil {
			return fmt.Errorf("ssl_fingerprint: %w", err)
		}
	}
	// unverified_proof is the first level's name for the opt-out in releases before the second
	// level checked certificates: a cluster set up then keeps it in its CIB until setup runs again.
	for _, name := range []string{"insecure_skip_certificate_check", "unverified_proof"} {
		skip, err := flag(vals, name)
		if err != nil {
			return err
		}
		o.Credential.InsecureSkipCertificateCheck = o.Credential.InsecureSkipCertificateCheck || skip
	}
	return nil
}

// flag reads a boolean option as the fence agents do: set, 1, yes, on and true are true; absent
// is false.
func flag(vals map[string]string, name string) (bool, error) {
	v, ok := vals[name]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "", "1", "yes", "on", "true":
		return true, nil
	case "0", "no", "off", "false":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is not a boolean", name, v)
}
