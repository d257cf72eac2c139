package bmc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
)

// PowerRead is one read of a system's PowerState; Err is set when the BMC did not answer.
type PowerRead struct {
	State string
	At    time.Time
	Err   error
	// HTTPStatus is the BMC's refusal (401 for credentials it rejects), 0 when it answered or
	// was never reached.
	HTTPStatus int
	// Unreachable: no connection, or no answer in time.
	Unreachable bool
}

// Describe says in a few words what the read found, for an administrator: the PowerState, the
// credentials refused, an unreachable BMC, or the error.
func (r PowerRead) Describe(host string) string {
	switch {
	case r.Err == nil:
		return fmt.Sprintf("BMC %s says PowerState %s", host, bmcText(r.State))
	case r.HTTPStatus == http.StatusUnauthorized || r.HTTPStatus == http.StatusForbidden:
		return fmt.Sprintf("BMC %s rejects the credentials (HTTP %d): check the password", host, r.HTTPStatus)
	case r.Unreachable:
		return fmt.Sprintf("BMC %s unreachable", host)
	}
	return fmt.Sprintf("BMC %s: %s", host, bmcText(r.Err.Error()))
}

// maxBMCText bounds what a BMC's own words take in a log line or tnfctl status.
const maxBMCText = 300

// bmcText is text a BMC chose (a power state, an error body) made fit for a log line and a
// terminal: control characters (a newline that forges a log line, a terminal escape) become
// spaces, and the text is cut at maxBMCText runes.
func bmcText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxBMCText {
		return string(r[:maxBMCText]) + "…"
	}
	return s
}

// ReadPower reads the PowerState once: one request, bounded by o.Timeout. An error never holds
// the password.
func ReadPower(ctx context.Context, c Credential, o Options) PowerRead {
	s, err := OpenSystem(ctx, c, o)
	if err != nil {
		return powerRead(nil, err, c.Password)
	}
	defer s.Close()
	return s.ReadPower()
}

// ReadPower reads the system's PowerState: one request.
func (s *System) ReadPower() PowerRead {
	sys, err := s.Read()
	return powerRead(sys, err, s.password)
}

// powerRead is what a read of sys found, or why it failed, without the password.
func powerRead(sys *redfish.ComputerSystem, err error, password string) PowerRead {
	r := PowerRead{At: time.Now()}
	if err == nil {
		r.State = string(sys.PowerState)
		return r
	}
	var rf *common.Error
	var ne net.Error
	if errors.As(err, &rf) {
		r.HTTPStatus = rf.HTTPReturnedStatusCode
	}
	r.Unreachable = r.HTTPStatus == 0 && (errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded))
	r.Err = errors.New(Redact(err.Error(), password))
	return r
}

// ProvenOff says whether reads prove a system off: at least two, all answered with exactly
// "Off", the first and last at least gap apart. Anything else (On, PoweringOff, no answer)
// proves nothing: a node that cannot be proven off may still write.
func ProvenOff(reads []PowerRead, gap time.Duration) (bool, string) {
	for i, r := range reads {
		if r.Err != nil {
			return false, fmt.Sprintf("BMC read %d failed: %v", i+1, r.Err)
		}
		if r.State != "Off" {
			return false, fmt.Sprintf("BMC read %d says PowerState %q", i+1, r.State)
		}
	}
	if len(reads) < 2 {
		return false, fmt.Sprintf("%d BMC reads, two are needed", len(reads))
	}
	if span := reads[len(reads)-1].At.Sub(reads[0].At); span < gap {
		return false, fmt.Sprintf("BMC reads only %v apart, %v needed", span, gap)
	}
	return true, fmt.Sprintf("BMC says PowerState Off on %d reads %v apart", len(reads), reads[len(reads)-1].At.Sub(reads[0].At).Round(100*time.Millisecond))
}

// ProveOff says whether the system is proven off (ProvenOff): by earlier reads (the power
// watch's, taken since the node looked gone) and up to two reads of its own, the second once
// the first read counted is gap old. A read that is not Off ends it at once: the caller's
// fallback (the next fencing level, or waiting) then starts without the gap. Each read of its
// own is passed to seen.
//
// Only a BMC whose certificate is checked can prove anything, unless the administrator opted out
// (CheckTrust): with certificate verification off and no pin, anyone on the BMC network can
// answer "Off" twice for a node that runs.
func ProveOff(ctx context.Context, c Credential, gap time.Duration, o Options, earlier []PowerRead, seen func(PowerRead)) (bool, string) {
	if err := c.CheckTrust(); err != nil {
		return false, err.Error()
	}
	if off, reason := ProvenOff(earlier, gap); off {
		return true, reason
	}
	s, err := OpenSystem(ctx, c, o)
	if err != nil {
		return false, err.Error()
	}
	defer s.Close()
	reads := append([]PowerRead(nil), earlier...)
	for own := 0; own < 2; own++ {
		if own > 0 {
			select {
			case <-ctx.Done():
				return false, ctx.Err().Error()
			case <-time.After(time.Until(reads[0].At.Add(gap))):
			}
		}
		r := s.ReadPower()
		seen(r)
		reads = append(reads, r)
		if off, reason := ProvenOff(reads, gap); off || r.Err != nil || r.State != "Off" {
			return off, reason
		}
	}
	return ProvenOff(reads, gap)
}

// PowerPollInterval is how often ForceOff reads the PowerState while it waits for Off:
// fence_redfish waits a second between reads, up to a second of an outage for nothing.
const PowerPollInterval = 200 * time.Millisecond

// ForceOff powers the system off through the BMC (ComputerSystem.Reset ForceOff, unless it
// already says Off) and returns once it says Off, or with why it did not before ctx ended. Each
// read is passed to seen. A refused reset fails at once unless the system reads Off right after:
// a BMC may refuse to power off what is already going off.
func (s *System) ForceOff(ctx context.Context, seen func(PowerRead)) error {
	sys, err := s.Read()
	r := powerRead(sys, err, s.password)
	seen(r)
	if r.Err != nil {
		return r.Err
	}
	if r.State == string(redfish.OffPowerState) {
		return nil
	}
	if err := s.Reset(sys, redfish.ForceOffResetType); err != nil {
		after := s.ReadPower()
		seen(after)
		if after.Err == nil && after.State == string(redfish.OffPowerState) {
			return nil
		}
		return errors.New(Redact(err.Error(), s.password))
	}
	last := r
	err = poll.Every(ctx, PowerPollInterval, func(context.Context) (bool, error) {
		last = s.ReadPower()
		seen(last)
		return last.Err == nil && last.State == string(redfish.OffPowerState), nil
	})
	if err != nil {
		return fmt.Errorf("not Off after the reset (%s): %w", last.Describe(s.endpoint), err)
	}
	return nil
}

// PowerOn sends ComputerSystem.Reset On.
func (s *System) PowerOn() error {
	sys, err := s.Read()
	if err == nil {
		err = s.Reset(sys, redfish.OnResetType)
	}
	if err != nil {
		return errors.New(Redact(err.Error(), s.password))
	}
	return nil
}

// Redact replaces every occurrence of secret in s.
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "<redacted>")
}
