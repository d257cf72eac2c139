//go:build integration

package emulator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// waitPower polls the system's PowerState through the Redfish API, a bounded number of times.
func waitPower(t *testing.T, cl *bmc.Client, want redfish.PowerState) {
	t.Helper()
	for i := 0; i < 300; i++ {
		if st, err := cl.PowerState(); err == nil && st == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := cl.PowerState()
	t.Fatalf("PowerState is %q (%v), want %q", st, err, want)
}

func processGone(pid int) bool {
	return syscall.Kill(pid, 0) != nil
}

// TestQEMUBackend drives a real QEMU process (TCG, no guest OS) through the Redfish API:
// ForceOff ends the process and reads "Off"; On starts a new one; ForceRestart and Nmi go
// through QMP; GracefulShutdown, ignored without a guest OS, escalates to a power cut.
func TestQEMUBackend(t *testing.T) {
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Fatalf("qemu-system-x86_64 is not installed (Debian package qemu-system-x86): %v", err)
	}
	dir := t.TempDir()
	console, pidFile := filepath.Join(dir, "console.log"), filepath.Join(dir, "qemu.pid")
	e := StartForTest(t, Config{Systems: []System{{ID: "vm", Username: "admin", Password: "pw", Power: Power{Backend: "qemu", QEMU: QEMUPower{
		Command: []string{qemu, "-accel", "tcg", "-machine", "pc", "-m", "32", "-nodefaults", "-no-user-config",
			"-display", "none", "-serial", "null"},
		Initial: "On", GracefulTimeout: duration.Duration{Duration: time.Second}, Console: console, PIDFile: pidFile,
	}}}}})
	cl, err := bmc.Connect(t.Context(), credential(t, e, "vm", "admin", "pw"), bmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	waitPower(t, cl, redfish.OnPowerState)
	pid := e.QEMUPID("vm")
	if pid == 0 {
		t.Fatal("no QEMU process")
	}
	if b, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Fatalf("pid file holds %q (%v), want %d", b, err, pid)
	}
	for _, r := range []redfish.ResetType{redfish.ForceRestartResetType, redfish.NmiResetType} {
		if err := cl.Reset(r); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if e.QEMUPID("vm") != pid {
			t.Fatalf("%s replaced the QEMU process", r)
		}
	}
	waitPower(t, cl, redfish.OnPowerState)

	if err := cl.Reset(redfish.ForceOffResetType); err != nil {
		t.Fatal(err)
	}
	waitPower(t, cl, redfish.OffPowerState)
	if !processGone(pid) {
		t.Fatalf("QEMU (pid %d) still runs after ForceOff", pid)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("pid file left after ForceOff: %v", err)
	}

	if err := cl.Reset(redfish.OnResetType); err != nil {
		t.Fatal(err)
	}
	waitPower(t, cl, redfish.OnPowerState)
	pid2 := e.QEMUPID("vm")
	if pid2 == 0 || pid2 == pid {
		t.Fatalf("On did not start a new QEMU (pid %d, was %d)", pid2, pid)
	}

	if err := cl.Reset(redfish.GracefulShutdownResetType); err != nil {
		t.Fatal(err)
	}
	waitPower(t, cl, redfish.OffPowerState)
	if !processGone(pid2) {
		t.Fatalf("QEMU (pid %d) still runs after the graceful shutdown escalated", pid2)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(console); err != nil {
		t.Fatalf("console file: %v", err)
	}
}
