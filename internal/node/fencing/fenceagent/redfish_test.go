package fenceagent

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/powerwatch"
	"github.com/tnf-layer/tnf-layer/internal/testutil/syncbuf"

	"github.com/tnf-layer/tnf-layer/test/logline"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
)

// powerLog is the emulator's record of the power actions it carried out, one line each.
type powerLog = syncbuf.Buffer

// bmcWithLog is bmcFor with the emulator's power actions logged, and system "stuck", whose
// resets are accepted and change nothing.
func bmcWithLog(t *testing.T) (*emulator.Emulator, *powerLog) {
	t.Helper()
	sys := func(id, initial string) emulator.System {
		return emulator.System{ID: id, Username: "admin", Password: password, Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: initial}}}
	}
	l := &powerLog{}
	e := emulator.StartForTest(t, emulator.Config{Log: slog.New(slog.NewTextHandler(l, nil)),
		Systems: []emulator.System{sys("on", "On"), sys("off", "Off"), sys("stuck", "On")},
		Faults:  emulator.Faults{Stuck: map[string]string{"stuck": "On"}}})
	return e, l
}

// TestRedfishPowersOff: the second level powers a running node off and succeeds once its BMC
// says Off; a reboot then powers it on; a node already off is fenced without a reset; a node
// the BMC cannot power off fails within power_timeout. The BMC's log names the agent.
func TestRedfishPowersOff(t *testing.T) {
	e, actions := bmcWithLog(t)
	for _, tc := range []struct {
		name, system, action string
		extra                []string
		code                 int
		output, state        string
		resets               []string
	}{
		{"off", "on", "off", nil, 0, "fenced: the BMC says Off", "Off", []string{"ForceOff"}},
		{"off, already off", "off", "off", nil, 0, "fenced", "Off", nil},
		{"reboot", "off", "reboot", nil, 0, "powered on", "On", []string{"On"}},
		{"reboot, stuck on", "stuck", "reboot", []string{"power_timeout=0.6"}, 1, "not Off after the reset", "On", nil},
	} {
		before := strings.Count(actions.String(), "power action")
		r := runAgent(t, Redfish, nil, stdin(t, e, tc.system, tc.action, tc.extra...))
		if r.code != tc.code || !strings.Contains(r.errOut, tc.output) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", tc.name, r.code, tc.code, tc.output, r.errOut)
		}
		if st := runAgent(t, Redfish, nil, stdin(t, e, tc.system, "monitor")); !strings.Contains(st.out, "Status: "+tc.state) {
			t.Errorf("%s: afterwards %q, want %s", tc.name, st.out, tc.state)
		}
		var resets []string
		for _, l := range strings.Split(actions.String(), "\n")[before:] {
			if logline.Field(l, "system") == "System "+tc.system {
				if c := logline.Field(l, "client"); c != Redfish.Name {
					t.Errorf("%s: the BMC names the client %q", tc.name, c)
				}
				resets = append(resets, logline.Field(l, "reset"))
			}
		}
		if strings.Join(resets, " ") != strings.Join(tc.resets, " ") {
			t.Errorf("%s: resets %q, want %q", tc.name, resets, tc.resets)
		}
	}
}

// TestNoPowerActionWithoutACheckedCertificate: the second level powers nothing, and sends no
// password, through a BMC whose certificate is not the pinned one or is neither verified nor
// pinned; the administrator's opt-out, written by its name, is the one way round.
func TestNoPowerActionWithoutACheckedCertificate(t *testing.T) {
	e, actions := bmcWithLog(t)
	wrongPin := "ssl_fingerprint=" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name   string
		in     string
		code   int
		output string
	}{
		{"a wrong pin", unpinned(t, e, "on", "reboot", wrongPin), 1, "not the pinned"},
		{"unverified, unpinned", unpinned(t, e, "on", "reboot"), 1, "neither verified nor pinned"},
		{"monitor, unverified, unpinned", unpinned(t, e, "on", "monitor"), 1, "neither verified nor pinned"},
	} {
		if r := runAgent(t, Redfish, nil, tc.in); r.code != tc.code || !strings.Contains(r.errOut, tc.output) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", tc.name, r.code, tc.code, tc.output, r.errOut)
		}
	}
	if got := actions.String(); got != "" {
		t.Fatalf("power actions through an unchecked BMC:\n%s", got)
	}
	if r := runAgent(t, Redfish, nil, unpinned(t, e, "on", "off", "insecure_skip_certificate_check=1")); r.code != 0 {
		t.Errorf("opted out: exit %d\n%s", r.code, r.errOut)
	}
}

// TestPowerWatchProvesOff: once the link to a node is down, the power watch reads its BMC and
// records the reads; the first level then proves the node off from them, even with the BMC
// hanging by the time Pacemaker asks. The record goes when the link comes back.
func TestPowerWatchProvesOff(t *testing.T) {
	e := bmcFor(t)
	dir := filepath.Join(t.TempDir(), "power")
	in := stdin(t, e, "off", "off", "gap=0.2")
	vals, err := ReadStdin(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	o, err := PowerOff.Parse(vals)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	w := powerwatch.Watcher{Node: "node2", Credential: func() (bmc.Credential, error) { return o.Credential, nil },
		Down: func(context.Context) (bool, error) { return down.Load(), nil }, Dir: dir, Gap: 200 * time.Millisecond,
		ReadTimeout: 5 * time.Second, Interval: 20 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}()
	record := powerwatch.Path(dir, o.Credential)
	wait, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	down.Store(true)
	if err := poll.Every(wait, 20*time.Millisecond, func(context.Context) (bool, error) {
		rec, ok, err := powerwatch.Load(record)
		off, _ := bmc.ProvenOff(powerwatch.Usable(rec, o.Credential, time.Now(), powerwatch.BootClock()), 200*time.Millisecond)
		return ok && off, err
	}); err != nil {
		t.Fatal(err)
	}
	e.SetFaults(emulator.Faults{HangNext: 100})
	agent := PowerOff
	agent.powerWatch = dir
	if r := runAgent(t, agent, nil, in+"read_timeout=1\n"); r.code != 0 || !strings.Contains(r.errOut, "proven off") {
		t.Errorf("with the power watch's reads and the BMC hung: exit %d\n%s", r.code, r.errOut)
	}
	down.Store(false)
	if err := poll.Every(wait, 20*time.Millisecond, func(context.Context) (bool, error) {
		_, ok, err := powerwatch.Load(record)
		return !ok, err
	}); err != nil {
		t.Fatal(err)
	}
}
