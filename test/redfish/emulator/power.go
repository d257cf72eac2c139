package emulator

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Reset types a ComputerSystem accepts.
const (
	ResetOn               = "On"
	ResetForceOff         = "ForceOff"
	ResetGracefulShutdown = "GracefulShutdown"
	ResetGracefulRestart  = "GracefulRestart"
	ResetForceRestart     = "ForceRestart"
	ResetPowerCycle       = "PowerCycle"
	ResetNmi              = "Nmi"
)

var allResetTypes = []string{ResetOn, ResetForceOff, ResetGracefulShutdown, ResetGracefulRestart, ResetForceRestart, ResetPowerCycle, ResetNmi}

// backend is a power backend's primitives. Reset types are built from them in reset.
type backend interface {
	State(ctx context.Context) (string, error) // "On" or "Off"
	On(ctx context.Context) error
	ForceOff(ctx context.Context) error
	// GracefulShutdown asks the OS to power off; the backend escalates to a power cut itself
	// if it can tell the request was ignored.
	GracefulShutdown(ctx context.Context) error
	Restart(ctx context.Context) error
	// Nmi returns errNotSupported where the backend cannot.
	Nmi(ctx context.Context) error
	Close() error
}

var errNotSupported = fmt.Errorf("not supported by this power backend")

// reset carries out one Redfish ResetType on a backend.
func reset(ctx context.Context, b backend, t string) error {
	switch t {
	case ResetOn:
		return b.On(ctx)
	case ResetForceOff:
		return b.ForceOff(ctx)
	case ResetGracefulShutdown:
		return b.GracefulShutdown(ctx)
	case ResetForceRestart, ResetGracefulRestart:
		return b.Restart(ctx)
	case ResetPowerCycle:
		if err := b.ForceOff(ctx); err != nil {
			return err
		}
		return b.On(ctx)
	case ResetNmi:
		return b.Nmi(ctx)
	}
	return fmt.Errorf("unknown reset type %q", t)
}

// fakeBackend keeps the power state in memory; changes land after a delay, like a slow BMC.
type fakeBackend struct {
	mu     sync.Mutex
	state  string
	delay  time.Duration
	timers []*time.Timer
}

func newFake(c FakePower) *fakeBackend {
	st := c.Initial
	if st == "" {
		st = "On"
	}
	return &fakeBackend{state: st, delay: c.Delay.Duration}
}

func (f *fakeBackend) State(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, nil
}

func (f *fakeBackend) set(states ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delay == 0 {
		f.state = states[len(states)-1]
		return
	}
	for i, st := range states {
		st := st
		f.timers = append(f.timers, time.AfterFunc(f.delay*time.Duration(i+1), func() {
			f.mu.Lock()
			f.state = st
			f.mu.Unlock()
		}))
	}
}

func (f *fakeBackend) On(context.Context) error               { f.set("On"); return nil }
func (f *fakeBackend) ForceOff(context.Context) error         { f.set("Off"); return nil }
func (f *fakeBackend) GracefulShutdown(context.Context) error { f.set("Off"); return nil }
func (f *fakeBackend) Restart(context.Context) error          { f.set("Off", "On"); return nil }
func (f *fakeBackend) Nmi(context.Context) error              { return nil }

func (f *fakeBackend) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.timers {
		t.Stop()
	}
	return nil
}

// execBackend runs the configured commands (the network-namespace test nodes: off kills the
// node's processes, on boots it again).
type execBackend struct{ c ExecPower }

func (e execBackend) run(ctx context.Context, argv []string) (string, error) {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", argv[0], err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (e execBackend) State(ctx context.Context) (string, error) {
	out, err := e.run(ctx, e.c.Status)
	if err != nil {
		return "", err
	}
	if out != "On" && out != "Off" {
		return "", fmt.Errorf("status command printed %q, want On or Off", out)
	}
	return out, nil
}

func (e execBackend) On(ctx context.Context) error {
	_, err := e.run(ctx, e.c.PowerOn)
	return err
}

func (e execBackend) ForceOff(ctx context.Context) error {
	_, err := e.run(ctx, e.c.PowerOff)
	return err
}

func (e execBackend) GracefulShutdown(ctx context.Context) error { return e.ForceOff(ctx) }

func (e execBackend) Restart(ctx context.Context) error {
	if err := e.ForceOff(ctx); err != nil {
		return err
	}
	return e.On(ctx)
}

func (e execBackend) Nmi(ctx context.Context) error {
	if len(e.c.Nmi) == 0 {
		return errNotSupported
	}
	_, err := e.run(ctx, e.c.Nmi)
	return err
}

func (e execBackend) Close() error { return nil }
