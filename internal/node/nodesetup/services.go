package nodesetup

import (
	"context"
	"os"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Services is the service manager setup works with.
type Services interface {
	// KeepOutOfBoot makes sure the units never start on their own (only Pacemaker starts them).
	KeepOutOfBoot(ctx context.Context, step func(string, string), units ...string) error
	// Start starts the cluster stack's units.
	Start(ctx context.Context, step func(string, string), units ...string) error
}

// DetectServices is systemd when it is the init system (sd_booted's test), else External.
func DetectServices() Services {
	if st, err := os.Stat("/run/systemd/system"); err == nil && st.IsDir() {
		return Systemd{}
	}
	return External{}
}

// Systemd drives systemctl.
type Systemd struct{ Tools pcmk.Tools }

func (s Systemd) KeepOutOfBoot(ctx context.Context, step func(string, string), units ...string) error {
	for _, u := range units {
		out, err := s.Tools.Run(ctx, "systemctl", "is-enabled", u)
		state := strings.TrimSpace(out)
		switch {
		case state == "disabled" || state == "masked":
			step(u, state)
			continue
		case err != nil && state == "":
			step(u, "not installed")
			continue
		}
		if _, err := s.Tools.Run(ctx, "systemctl", "disable", u); err != nil {
			return err
		}
		step(u, "disabled (Pacemaker starts it)")
	}
	return nil
}

func (s Systemd) Start(ctx context.Context, step func(string, string), units ...string) error {
	if _, err := s.Tools.Run(ctx, "systemctl", append([]string{"start"}, units...)...); err != nil {
		return err
	}
	step(strings.Join(units, " "), "started")
	return nil
}

// External is a node without systemd (the namespace test cluster): whoever boots the node
// starts the daemons; setup only waits for them.
type External struct{}

func (External) KeepOutOfBoot(_ context.Context, step func(string, string), units ...string) error {
	step(strings.Join(units, " "), "no systemd: nothing starts them but Pacemaker")
	return nil
}

func (External) Start(_ context.Context, step func(string, string), units ...string) error {
	step(strings.Join(units, " "), "no systemd: started by whoever boots this node")
	return nil
}
