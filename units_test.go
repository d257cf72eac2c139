//go:build integration

package tnflayer_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tnflayer "github.com/tnf-layer/tnf-layer"
)

// TestUnitsVerify runs systemd-analyze verify on the units, with the corosync and pacemaker
// units their drop-ins extend, in a root that holds this machine's systemd units and stand-in
// executables for the commands the units name (verify checks that they exist, not what they do).
// The preset is applied there too: it must enable the stack and the timer and disable cri-o and
// kubelet.
func TestUnitsVerify(t *testing.T) {
	root := t.TempDir()
	sys := filepath.Join(root, "usr/lib/systemd/system")
	if err := os.MkdirAll(filepath.Dir(sys), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", "/lib/systemd/system", filepath.Join(root, "usr/lib/systemd")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	err := fs.WalkDir(tnflayer.Units, "units", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := fs.ReadFile(tnflayer.Units, p)
		dst := filepath.Join(sys, strings.TrimPrefix(p, "units/"))
		if strings.HasSuffix(p, ".preset") {
			dst = filepath.Join(root, "usr/lib/systemd/system-preset", filepath.Base(p))
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, stub := range []string{"usr/bin/tnfctl", "usr/sbin/corosync", "usr/sbin/corosync-cfgtool", "usr/sbin/pacemakerd", "usr/bin/crio", "usr/bin/kubelet", "usr/sbin/pcsd"} {
		p := filepath.Join(root, stub)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// cri-o and kubelet as RHCOS ships them, enabled by default.
	for _, u := range []string{"crio.service", "kubelet.service"} {
		unit := "[Service]\nExecStart=/usr/bin/" + strings.TrimSuffix(u, ".service") + "\n[Install]\nWantedBy=multi-user.target\n"
		if err := os.WriteFile(filepath.Join(sys, u), []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("systemd-analyze", "verify", "--root="+root, "tnf-setup.service", "tnf-auto-unblock.service",
		"tnf-auto-unblock.timer", "corosync.service", "pacemaker.service")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	want := map[string]bool{"corosync.service": true, "pacemaker.service": true, "tnf-setup.service": true,
		"tnf-auto-unblock.timer": true, "crio.service": false, "kubelet.service": false, "pcsd.service": false}
	for unit := range want {
		if out, err := exec.Command("systemctl", "--root="+root, "preset", unit).CombinedOutput(); err != nil {
			t.Fatalf("preset %s: %v\n%s", unit, err, out)
		}
	}
	for unit, want := range want {
		out, _ := exec.Command("systemctl", "--root="+root, "is-enabled", unit).Output()
		if got := strings.TrimSpace(string(out)) == "enabled"; got != want {
			t.Errorf("%s: is-enabled %q after the preset, want enabled=%v", unit, strings.TrimSpace(string(out)), want)
		}
	}
}
