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
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

// TestUnitsVerify runs systemd-analyze verify on the units, with the corosync and pacemaker
// units their drop-ins extend, in a root that holds this machine's systemd units and stand-in
// executables for the commands the units name (verify checks that they exist, not what they do).
// The interlock drop-ins are verified with the cri-o and kubelet units they extend.
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
	for _, stub := range []string{"usr/bin/tnfctl", "usr/bin/mkdir", "usr/sbin/corosync", "usr/sbin/corosync-cfgtool", "usr/sbin/pacemakerd", "usr/bin/crio", "usr/bin/kubelet", "usr/sbin/pcsd"} {
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
	cmd := exec.Command("systemd-analyze", "verify", "--root="+root, "tnf-setup.service", "tnf-metrics.service", "tnf-power-watch.service", "tnf-out-of-service.service", "tnf-handover.service", "tnf-auto-unblock.service",
		"tnf-auto-unblock.timer", "tnf-keys-sync.service", "tnf-keys-sync.timer", "tnf-static-pod-guard.service", "tnf-static-pod-guard.path", "corosync.service", "pacemaker.service", "crio.service", "kubelet.service")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The image's own step (the Containerfile's systemctl enable with the definition's list), on
	// a root where someone enabled cri-o and kubelet: ours end enabled, and a preset-all, should
	// anyone run one, leaves ours enabled and turns cri-o and kubelet off.
	data, err := fs.ReadFile(tnflayer.Layers, "layers/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := layerdef.Parse("layers/lab.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	systemctl := func(args ...string) string {
		out, err := exec.Command("systemctl", append([]string{"--root=" + root}, args...)...).CombinedOutput()
		if err != nil && args[0] != "is-enabled" {
			t.Fatalf("systemctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	systemctl("enable", "crio.service", "kubelet.service")
	systemctl(append([]string{"enable"}, l.Enable...)...)
	for _, u := range l.Enable {
		if got := systemctl("is-enabled", u); got != "enabled" {
			t.Errorf("%s: is-enabled %q after the image's systemctl enable", u, got)
		}
	}
	want := map[string]bool{"crio.service": false, "kubelet.service": false, "pcsd.service": false}
	for _, u := range l.Enable {
		want[u] = true
	}
	for unit := range want {
		systemctl("preset", unit)
	}
	for unit, want := range want {
		if got := systemctl("is-enabled", unit) == "enabled"; got != want {
			t.Errorf("%s: is-enabled %q after the preset, want enabled=%v", unit, systemctl("is-enabled", unit), want)
		}
	}
}

// TestUnitExposure: the units that run the layer's commands beside the cluster, long or often,
// run confined as far as their tools allow: tnf-metrics.service answers the network,
// tnf-power-watch.service and tnf-auto-unblock.service talk to the peer's BMC with its password,
// tnf-out-of-service.service and tnf-handover.service to the API with a credential, and
// tnf-installer-kubelet.service starts cri-o and kubelet at every boot, and
// tnf-static-pod-guard.service moves files of the kubelet's folder. systemd-analyze's offline
// security analysis scores them 2.0, 1.8, 2.0, 2.0, 2.0, 1.3 and 0.9 (9.6 unconfined); what is left
// is root, the host's network and the address families the tools use. The threshold is in
// tenths. The boot smoke test runs each one's steps in its sandbox. Not confined:
// tnf-setup.service and tnf-reconfigure.service, which write the cluster's configuration through
// pcs and pcsd and start and enable its services, and tnf-keys-sync.service, a pass every 5
// minutes, which writes the node's credential wherever secretsFromAPI.kubeconfigFile names it.
func TestUnitExposure(t *testing.T) {
	for unit, threshold := range map[string]string{
		"tnf-metrics.service": "20", "tnf-power-watch.service": "18", "tnf-auto-unblock.service": "20",
		"tnf-out-of-service.service": "20", "tnf-handover.service": "20", "tnf-installer-kubelet.service": "13",
		"tnf-static-pod-guard.service": "11",
	} {
		out, err := exec.Command("systemd-analyze", "security", "--offline=yes", "--threshold="+threshold, "units/"+unit).CombinedOutput()
		if err != nil {
			t.Errorf("systemd-analyze security %s: exposure above %s tenths (%v):\n%s", unit, threshold, err, out)
		}
	}
}
