// Package poweroffagent is fence_tnf_poweroff, the first fencing level: a stonith agent that
// fences a node only by proving, through its Redfish BMC, that it is already powered off. A
// node that is off cannot write, so a survivor that sees its peer's BMC report Off twice needs
// no race delay (that delay exists only to settle a network split, where both nodes are on and
// this level fails on both sides within a few seconds). It never powers anything: a node it
// "fences" stays off. It speaks the fence agents' protocol as Pacemaker's fencer calls it: the
// options as name=value lines on standard input, the action among them.
package poweroffagent

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

// Name is the agent's name: Pacemaker finds fence agents as /usr/sbin/<name>.
const Name = "fence_tnf_poweroff"

// Options are the agent's parameters, parsed.
type Options struct {
	Action      string
	Credential  bmc.Credential
	Gap         time.Duration // between the two reads
	ReadTimeout time.Duration // bounds each read, connection included
}

// Defaults: the two reads a second apart, each given 3 s, so a BMC that does not answer costs
// the fencing at most about 7 s before the next level runs.
const (
	DefaultGap         = time.Second
	DefaultReadTimeout = 3 * time.Second
)

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
func Parse(vals map[string]string) (Options, error) {
	o := Options{Action: vals["action"], Gap: DefaultGap, ReadTimeout: DefaultReadTimeout}
	if o.Action == "" {
		o.Action = "reboot" // the fence agents' default
	}
	if needsBMC(o.Action) {
		if err := o.parseBMC(vals); err != nil {
			return Options{}, err
		}
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"gap", &o.Gap}, {"read_timeout", &o.ReadTimeout}} {
		v, ok := vals[d.name]
		if !ok {
			continue
		}
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs <= 0 || secs > 60 {
			return Options{}, fmt.Errorf("%s: %q is not a number of seconds in (0, 60]", d.name, v)
		}
		*d.to = time.Duration(secs * float64(time.Second))
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
	insecure := false
	if v, ok := vals["ssl_insecure"]; ok {
		if insecure, err = parseBool(v); err != nil {
			return fmt.Errorf("ssl_insecure: %w", err)
		}
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
	if v, ok := vals["unverified_proof"]; ok {
		if o.Credential.UnverifiedProof, err = parseBool(v); err != nil {
			return fmt.Errorf("unverified_proof: %w", err)
		}
	}
	return nil
}

// parseBool reads a flag as the fence agents do: set, 1, yes, on and true are true.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "1", "yes", "on", "true":
		return true, nil
	case "0", "no", "off", "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}
