//go:build boot

package boot_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The lab base is read from the build store.
	_ "github.com/containers/image/v5/storage"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/testutil/bootdisk"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// The update tests: machines that receive the layer the way MCO delivers it, an image update
// applied to a node that already runs and a reboot, never a first boot into the layer. RHCOS's
// deployment (rpm-ostree, bootc) cannot run here: bootdisk.Deploy stands in for it, on the
// powered-off machine's disk.

// tree is the root file system of an image, unpacked once for the whole run: "base" (the lab
// base in the build store: these tests' stock image), "v1" (the lab layer make lab pushed) and
// "v2" (the lab layer built again with the next version: an agent-only change).
func (img *labImage) tree(t testing.TB, name string) string {
	t.Helper()
	img.treesMu.Lock()
	defer img.treesMu.Unlock()
	if p, ok := img.trees[name]; ok {
		return p
	}
	began := time.Now()
	dir := filepath.Join(img.dir, "tree-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch name {
	case "base":
		err = unpackBase(img.base, dir)
	case "v1":
		_, err = pull(img.repo, img.pushed, dir)
	case "v2":
		err = buildNext(img, dir)
	default:
		err = fmt.Errorf("no image %q", name)
	}
	if err != nil {
		t.Fatalf("image %s: %v", name, err)
	}
	if img.trees == nil {
		img.trees = map[string]string{}
	}
	img.trees[name] = dir
	t.Logf("image %s unpacked in %v", name, time.Since(began).Round(time.Second))
	return dir
}

// store is the build store make lab used.
func store() string {
	if s := os.Getenv("STORE"); s != "" {
		return s
	}
	return "/var/lib/tnf-layer/storage"
}

// unpackBase unpacks the lab base (out/lab/build.json's base, by digest) from the build store.
func unpackBase(base, dir string) error {
	s := store()
	ref, err := imageread.ParseReference("containers-storage:[overlay@" + filepath.Join(s, "graph") + "+" + filepath.Join(s, "run") + "]" + base)
	if err != nil {
		return err
	}
	_, err = bootdisk.Unpack(context.Background(), ref, nil, dir)
	return err
}

// nextVersion is v2's version: v1's with a suffix.
func (img *labImage) nextVersion() string { return img.version + ".next" }

// buildNext builds the lab layer again with the next version, as CI would for an agent change,
// into an OCI layout, and unpacks it.
func buildNext(img *labImage, dir string) error {
	layout := filepath.Join(img.dir, "v2-oci")
	cmd := exec.Command(filepath.Join(img.bin, "build-layer"), "build", "--layer", "lab", "--source", img.repo, "--store", store(),
		"--layer-version", img.nextVersion(), "--push", "oci:"+layout+":lab")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build-layer: %v\n%s", err, tailString(string(out), 2000))
	}
	ref, err := imageread.ParseReference("oci:" + layout + ":lab")
	if err != nil {
		return err
	}
	_, err = bootdisk.Unpack(context.Background(), ref, nil, dir)
	return err
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// baseDisk is the stock image with the node configuration and the test's access, as the
// installer's Ignition leaves a node before its first boot.
func (img *labImage) baseDisk(t testing.TB) string {
	t.Helper()
	disk := filepath.Join(img.dir, "base.raw")
	if _, err := os.Stat(disk); err == nil {
		return disk
	}
	root := filepath.Join(img.dir, "base-configured")
	defer os.RemoveAll(root)
	hostRun(t, "cp", "-a", "--no-target-directory", img.tree(t, "base"), root)
	if err := configure(root); err != nil {
		t.Fatal(err)
	}
	if err := bootdisk.MakeExt4(context.Background(), root, disk, 4<<30, "root"); err != nil {
		t.Fatal(err)
	}
	return disk
}

func hostRun(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// cleanStop shuts a machine down from inside, as the machine config daemon's reboot does (the
// cluster stack stops, etcd leaves gracefully), and waits until it is off. It returns how long
// the shutdown took.
func (l *lab) cleanStop(name string) time.Duration {
	l.t.Helper()
	began := time.Now()
	// --no-block: the SSH session ends with the machine.
	l.run(name, "systemctl --no-block poweroff")
	l.vms[name].sshClient.close()
	poll.Until(l.t, name+" off after its own shutdown", bootLimit, time.Second, func() (bool, string) {
		st := l.powerState(name)
		return st == "Off", string(st)
	})
	return time.Since(began)
}

// switchOS updates a powered-off machine's OS from image tree from to image tree to: its disk is
// read through a read-only loop mount of a raw copy, bootdisk.Deploy makes the updated root file
// system (the node's /var, its /etc merged), and a disk of it replaces the machine's.
func (l *lab) switchOS(name, from, to string) {
	l.t.Helper()
	began := time.Now()
	if st := l.powerState(name); st != "Off" {
		l.t.Fatalf("%s: the OS is switched on a machine that is off, not %s", name, st)
	}
	work, err := os.MkdirTemp(image.dir, "switch-"+name+"-")
	if err != nil {
		l.t.Fatal(err)
	}
	defer os.RemoveAll(work)
	disk := filepath.Join(l.dir, name+".qcow2")
	raw, mnt, root := filepath.Join(work, "disk.raw"), filepath.Join(work, "mnt"), filepath.Join(work, "root")
	hostRun(l.t, "qemu-img", "convert", "-O", "raw", disk, raw)
	if err := os.Mkdir(mnt, 0o755); err != nil {
		l.t.Fatal(err)
	}
	hostRun(l.t, "mount", "-o", "loop,ro,noload", raw, mnt)
	err = bootdisk.Deploy(from, to, mnt, root)
	hostRun(l.t, "umount", "--detach-loop", mnt)
	if err != nil {
		l.t.Fatal(err)
	}
	next := filepath.Join(l.dir, fmt.Sprintf("%s-%d.raw", name, time.Now().UnixNano()))
	if err := bootdisk.MakeExt4(context.Background(), root, next, 4<<30, "root"); err != nil {
		l.t.Fatal(err)
	}
	if err := os.Remove(disk); err != nil {
		l.t.Fatal(err)
	}
	hostRun(l.t, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", next, disk)
	l.t.Logf("%s: OS switched from %s to %s in %v", name, filepath.Base(from), filepath.Base(to), time.Since(began).Round(time.Second))
}

// layerVersions are the layer versions each node's agent publishes, as tnfctl status on from
// shows them.
func (l *lab) layerVersions(from string) map[string]string {
	l.t.Helper()
	_, st, err := l.status(from)
	if err != nil || st == nil {
		l.t.Fatalf("status on %s: %v", from, err)
	}
	v := map[string]string{}
	for _, n := range st.Nodes {
		v[n.Name] = n.Attributes[etcdnode.AttrLayerVersion]
	}
	return v
}

// waitVersions waits until tnfctl status on from shows want's layer version for each node.
func (l *lab) waitVersions(from string, want map[string]string) {
	l.t.Helper()
	poll.Until(l.t, fmt.Sprintf("layer versions %v seen from %s", want, from), settleLimit, 3*time.Second, func() (bool, string) {
		got := l.layerVersions(from)
		for n, v := range want {
			if got[n] != v {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// TestPivot is the install as RHCOS does it: each machine first boots the stock image (here the
// lab base) with its node configuration, its machine ID made there; then its OS is switched to
// the layer by an image update and it reboots. The image's own links must start the cluster
// stack (no preset runs: it is not a first boot), and the two nodes form the cluster as in the
// cold boot.
func TestPivot(t *testing.T) {
	l := newLab(t, image.baseDisk(t))
	v1 := image.tree(t, "v1")
	for _, n := range nodeNames {
		l.power(n, redfish.OnResetType)
	}
	ids := map[string]string{}
	for _, n := range nodeNames {
		l.waitBooted(n)
		ids[n] = l.run(n, "cat /etc/machine-id")
		l.run(n, "! test -e /usr/bin/tnfctl && ! test -e /usr/sbin/corosync && test -f /etc/tnf/cluster.yaml")
	}
	for _, n := range nodeNames {
		l.cleanStop(n)
		l.switchOS(n, image.tree(t, "base"), v1)
	}
	t0 := time.Now()
	for _, n := range nodeNames {
		l.power(n, redfish.OnResetType)
	}
	for _, n := range nodeNames {
		l.waitBooted(n)
		if id := l.run(n, "cat /etc/machine-id"); id != ids[n] || strings.TrimSpace(id) == "uninitialized" {
			t.Fatalf("%s: machine ID %q after the switch, %q before: an update keeps it", n, id, ids[n])
		}
		// Enabled by the image's links, not by a preset.
		l.run(n, "systemctl is-enabled corosync.service pacemaker.service tnf-setup.service tnf-auto-unblock.timer")
	}
	l.waitRoles("node1", map[string]string{"node1": "Promoted", "node2": "Promoted"})
	l.voters("node1", 2)
	w := l.startWriter()
	l.waitWrites(w, "both up after the switch")
	l.checkAcked(w.Stop(), nodeNames...)
	l.logTimeline("switched from the stock image to the layer", t0, l.journal("node1", t0), l.journal("node2", t0))
}

// TestRollingUpdate is a layer update as MCO rolls it out: both nodes serve on v1 with a writer
// running; then one node at a time stops cleanly, its OS is switched to v2 (an agent-only change
// with a new version), it boots, and the next node goes only once both are Promoted again.
// Nobody is fenced, no acknowledged write is lost, both end on v2, and between the two nodes'
// turns a v1 and a v2 agent run the cluster together.
func TestRollingUpdate(t *testing.T) {
	rollingUpdate(t, func(node string, stop, back, gap time.Duration) {})
}

// rollingUpdate runs the rolling update and reports each node's turn: its clean stop, the time
// from the stop to both Promoted again, and the longest write gap meanwhile.
func rollingUpdate(t testing.TB, report func(node string, stop, back, gap time.Duration)) {
	l := newLab(t, image.disk)
	v1, v2 := image.tree(t, "v1"), image.tree(t, "v2")
	l.bothUp()
	both := map[string]string{"node1": "Promoted", "node2": "Promoted"}
	l.voters("node1", 2)
	l.waitVersions("node1", map[string]string{"node1": image.version, "node2": image.version})
	w := l.startWriter()
	l.waitWrites(w, "both up on v1")
	for i, n := range nodeNames {
		other := nodeNames[1-i]
		t0 := time.Now()
		stop := l.cleanStop(n)
		l.switchOS(n, v1, v2)
		l.power(n, redfish.OnResetType)
		l.waitBooted(n)
		l.waitRoles(other, both)
		l.voters(other, 2)
		back := time.Since(t0)
		gap := w.LongestGap(t0, time.Now())
		l.waitWrites(w, n+" back on v2")
		versions := map[string]string{n: image.nextVersion(), other: image.version}
		if i == 1 {
			versions[other] = image.nextVersion()
		}
		l.waitVersions(other, versions)
		t.Logf("%s updated: clean stop %v, stop to both Promoted %v, longest write gap %v", n,
			stop.Round(time.Second), back.Round(time.Second), gap.Round(10*time.Millisecond))
		l.logTimeline(n+" updated to v2", t0, l.journal(other, t0), l.journal(n, t0), firstWrite(w, t0))
		report(n, stop, back, gap)
	}
	for _, target := range nodeNames {
		for _, by := range nodeNames {
			if c, err := l.fences(by, target); err != nil || c != 0 {
				t.Fatalf("%s fenced %d times in %s's history (%v): a rolling update fences nobody", target, c, by, err)
			}
		}
	}
	l.checkAcked(w.Stop(), nodeNames...)
	t.Logf("status on node1 after the update:\n%s", l.run("node1", "tnfctl status || true"))
}

// TestKubeletEnabledElsewhere: someone enables cri-o and kubelet on node 1 (the machine config
// daemon does after a change of their units), and node 1 reboots while node 2 is off. Node 1
// must stay inert, neither started at boot nor by a `systemctl start`, until the admin confirms
// node 2 down; then Pacemaker starts them.
func TestKubeletEnabledElsewhere(t *testing.T) {
	l := newLab(t, image.disk)
	l.bothUp()
	l.cleanStop("node2")
	l.run("node1", "systemctl enable kubelet.service crio.service")
	l.cleanStop("node1")
	t0 := l.powerOn("node1")
	l.run("node1", "systemctl is-enabled kubelet.service crio.service")
	// Someone starts them by hand: the interlock skips them.
	l.run("node1", "systemctl start crio.service kubelet.service")
	l.stayInert("node1", inertFor)
	skipped := l.run("node1", "journalctl -b --no-pager -o cat -u kubelet.service -u crio.service | grep -c skipped")
	t.Logf("node1: %s condition skips of cri-o and kubelet in this boot (at boot and by hand)", strings.TrimSpace(skipped))
	confirmed := time.Now()
	l.run("node1", "tnfctl confirm-peer-down --yes")
	l.waitRoles("node1", map[string]string{"node1": "Promoted"})
	out := l.run("node1", "systemctl is-active crio.service kubelet.service; ls /run/systemd/system/kubelet.service.d/")
	if !strings.HasPrefix(out, "active\nactive\n") || !strings.Contains(out, "50-pacemaker.conf") {
		t.Fatalf("node1 after the confirmation: cri-o and kubelet are not Pacemaker's and running:\n%s", out)
	}
	l.logTimeline("kubelet enabled by someone, node1 alone", t0, []event{{confirmed, "host", "tnfctl confirm-peer-down --yes"}}, l.journal("node1", t0))
}

// TestUnitsInLabImage: in the lab image as pushed, systemd-analyze verify passes on the units
// the layer ships and extends, and the image's own links enable the stack, leave cri-o and
// kubelet disabled, and tnf-reconfigure.service to whoever starts it.
func TestUnitsInLabImage(t *testing.T) {
	root := image.tree(t, "v1")
	units := []string{"corosync.service", "pacemaker.service", "tnf-setup.service", "tnf-metrics.service", "tnf-out-of-service.service", "tnf-handover.service",
		"tnf-installer-kubelet.service", "tnf-reconfigure.service", "tnf-auto-unblock.service", "tnf-auto-unblock.timer", "tnf-keys-sync.service", "tnf-keys-sync.timer", "tnf-static-pod-guard.service", "tnf-static-pod-guard.path", "crio.service", "kubelet.service"}
	out, err := exec.Command("systemd-analyze", append([]string{"verify", "--root=" + root}, units...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	want := map[string]string{"corosync.service": "enabled", "pacemaker.service": "enabled", "tnf-setup.service": "enabled", "tnf-metrics.service": "enabled",
		"tnf-out-of-service.service": "enabled", "tnf-handover.service": "enabled", "tnf-installer-kubelet.service": "enabled", "tnf-auto-unblock.timer": "enabled", "tnf-keys-sync.timer": "enabled", "tnf-static-pod-guard.path": "enabled", "crio.service": "disabled", "kubelet.service": "disabled",
		// Started only by MCO's node disruption policy.
		"tnf-reconfigure.service": "static"}
	for u, w := range want {
		out, _ := exec.Command("systemctl", "--root="+root, "is-enabled", u).Output()
		if got := strings.TrimSpace(string(out)); got != w {
			t.Errorf("%s: %q in the image, want %q", u, got, w)
		}
	}
}
