//go:build integration

package cluster_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// layout is what the power commands need to find a node; the test writes it as layout.json in
// the cluster's directory, since the emulator runs them as separate processes.
type layout struct {
	Bin   string               `json:"bin"`
	Nodes map[string]nodeSetup `json:"nodes"`
}

type nodeSetup struct {
	Name  string `json:"name"`
	NetNS string `json:"netns"`
	Dir   string `json:"dir"`
	// Addrs are the node's addresses by device ("cl": "192.168.77.1/24"): the node holds them
	// only while powered on.
	Addrs map[string]string `json:"addrs"`
	// APIServer is the command line that runs the node's kube-apiserver, in the API scenarios
	// (apiserver_test.go); empty elsewhere.
	APIServer []string `json:"apiServer,omitempty"`
	// StaticPods is the kubelet's etcd static pod manifest where a stand-in kubelet runs it (the
	// installer's state, handover_test.go); empty elsewhere.
	StaticPods string `json:"staticPods,omitempty"`
	// Handover is tnf-handover.service's command line, where the node has one.
	Handover []string `json:"handover,omitempty"`
	// PublishStatus is tnf-publish-status.service's command line where a test gives it one
	// (else it runs where the node's secrets come through the API).
	PublishStatus []string `json:"publishStatus,omitempty"`
	// SecretsFromAPI: setup fetches the node's Secrets through the node's API before it writes
	// corosync.conf, so Corosync and Pacemaker start whenever setup gets there (as their units
	// do once setup starts them), and the API first.
	SecretsFromAPI bool `json:"secretsFromAPI,omitempty"`
	// Bin holds the node's agents where they are another release's (the mixed-version
	// scenarios, release_test.go); empty: the layout's.
	Bin string `json:"bin,omitempty"`
	// Field: the node runs OpenShift's own two-node stack and nothing of the layer (field_test.go):
	// it boots into Corosync and Pacemaker alone, and its etcd runs in podman, whose containers
	// need the host's cgroup hierarchies and have mount namespaces of their own.
	Field bool `json:"field,omitempty"`
	// Guest: a field node that also runs the layer, as its guest (guest_test.go): its boot starts
	// tnf-metrics.service and tnf-setup.service as on a layer node, after Corosync and Pacemaker.
	Guest bool `json:"guest,omitempty"`
	// HostMountNS is the test's own mount namespace, for a field node: a process there is never
	// the node's (processes). Read by the test, because pid 1's may not be readable.
	HostMountNS string `json:"hostMountNS,omitempty"`
	// HARoot is a Debian tree whose HA stack the node runs instead of the host's
	// (TNF_HA_ROOT, tools/ha-root): its /usr and its library cache over the host's.
	HARoot string `json:"haRoot,omitempty"`
}

// agents is the folder of the node's agents: its own release's, else the layout's bin.
func (n nodeSetup) agents(layoutBin string) string {
	if n.Bin != "" {
		return n.Bin
	}
	return layoutBin
}

func readLayout(dir string) (layout, error) {
	var l layout
	data, err := os.ReadFile(filepath.Join(dir, "layout.json"))
	if err == nil {
		err = json.Unmarshal(data, &l)
	}
	return l, err
}

// postDelay is how long a machine the BMC powers on takes before its operating system starts
// (firmware, POST): real servers take minutes. A BMC's power-on returns at once, as a real one
// does, so a fencing's reboot completes while its target is still dark, and the target's
// cluster stack comes up only afterwards.
const postDelay = 10 * time.Second

// powerCommand is the emulator's exec backend: `<test binary> tnf-power power-on|off|status DIR
// NODE`; power-on starts the machine (it boots postDelay later, in a process of its own:
// `tnf-power boot-after-post DIR NODE`). The tests use it too, with four more actions: on (the
// machine powered on and booted before the command returns), shutdown (a clean power-down: the
// cluster stack stopped as systemd stops it, then the power cut), cluster-stop and
// cluster-start (Corosync and Pacemaker stopped or started on a node that stays up).
func powerCommand(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: tnf-power power-on|on|off|status|shutdown|cluster-stop|cluster-start|boot-after-post DIR NODE")
	}
	l, err := readLayout(args[1])
	if err != nil {
		return err
	}
	n, ok := l.Nodes[args[2]]
	if !ok {
		return fmt.Errorf("no node %q", args[2])
	}
	unlock := func() {}
	if args[0] != "status" {
		if unlock, err = n.lockPower(); err != nil {
			return err
		}
		defer func() { unlock() }()
	}
	switch args[0] {
	case "status":
		if _, err := os.Stat(n.path("powered-broken")); err == nil || n.holder() > 0 || n.postPID() > 0 {
			fmt.Println("On")
		} else {
			fmt.Println("Off")
		}
		return nil
	case "off":
		_ = os.Remove(n.path("powered-broken"))
		return n.powerOff()
	case "power-on":
		if n.holder() > 0 || n.postPID() > 0 {
			return nil
		}
		if _, err := os.Stat(n.path("broken")); err == nil {
			return os.WriteFile(n.path("powered-broken"), nil, 0o644)
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		pid, err := start(n.path("log", "post.out"), self, "tnf-power", "boot-after-post", args[1], n.Name)
		if err != nil {
			return err
		}
		return os.WriteFile(n.path("posting"), []byte(strconv.Itoa(pid)), 0o644)
	case "boot-after-post":
		// The lock is held now; release it while the machine POSTs, then boot under it, unless
		// the power was cut meanwhile (powerOff killed this process) or an on booted it.
		unlock()
		time.Sleep(postDelay)
		relock, err := n.lockPower()
		if err != nil {
			return err
		}
		defer relock()
		if n.postPID() != os.Getpid() {
			return nil
		}
		_ = os.Remove(n.path("posting"))
		return n.boot(n.agents(l.Bin))
	case "shutdown":
		if err := n.stopCluster(); err != nil {
			return err
		}
		return n.powerOff()
	case "cluster-stop":
		return n.stopCluster()
	case "cluster-start":
		return n.startCluster()
	case "on":
		n.cancelPost()
		if n.holder() > 0 {
			return nil
		}
		// A node whose hardware broke powers on but never boots.
		if _, err := os.Stat(n.path("broken")); err == nil {
			return os.WriteFile(n.path("powered-broken"), nil, 0o644)
		}
		return n.boot(n.agents(l.Bin))
	}
	return fmt.Errorf("unknown power action %q", args[0])
}

// postPID is the PID of the process that boots the machine after its POST (power-on), 0 when
// none does.
func (n nodeSetup) postPID() int {
	pid, _ := strconv.Atoi(readFile(n.path("posting")))
	if pid <= 0 || !strings.Contains(readFile(fmt.Sprintf("/proc/%d/cmdline", pid)), "boot-after-post\x00"+filepath.Dir(n.Dir)) {
		return 0
	}
	return pid
}

// cancelPost stops a POST in progress by its PID: the machine will not boot.
func (n nodeSetup) cancelPost() {
	if pid := n.postPID(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitGone(pid, 5*time.Second)
	}
	_ = os.Remove(n.path("posting"))
}

func (n nodeSetup) path(p ...string) string { return filepath.Join(append([]string{n.Dir}, p...)...) }

// holder is the PID of the process that keeps the node's mount and UTS namespaces, or 0 when
// the node is off. The namespace's identity is kept beside the PID, so a reused PID is not
// mistaken for the node.
func (n nodeSetup) holder() int {
	data, err := os.ReadFile(n.path("holder"))
	if err != nil {
		return 0
	}
	pidText, ns, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	pid, _ := strconv.Atoi(pidText)
	if pid <= 0 || mountNS(pid) != ns {
		return 0
	}
	return pid
}

func mountNS(pid int) string {
	ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	return ns
}

func netNS(pid int) string {
	ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	return ns
}

// processes are the PIDs in the node's mount namespace: everything the node runs (there is no
// PID namespace, so they are found by namespace, never by name). A field node's containers
// have mount namespaces of their own and share the node's network namespace (podman's
// --network=host): they are found by that, but never a process in the host's mount namespace:
// the test itself, whose main thread may be in the node's network namespace for a moment (a
// dial through it, cluster.dial), and was killed with the node.
func (n nodeSetup) processes() []int {
	h := n.holder()
	if h == 0 {
		return nil
	}
	ns, net := mountNS(h), netNS(h)
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if mnt := mountNS(pid); mnt == ns || n.Field && mnt != n.HostMountNS && netNS(pid) == net {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lockPower makes power actions on the node one at a time: the emulator runs each Redfish
// request as it comes, so a fence's off could run while an on is still booting the node, and a
// daemon that on starts after off's sweep would live on in a namespace nobody holds.
func (n nodeSetup) lockPower() (func(), error) {
	f, err := os.OpenFile(n.path("power.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for range 1200 {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			return func() { f.Close() }, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.Close()
	return nil, fmt.Errorf("%s: another power action held the lock for a minute", n.Name)
}

// powerOff is a power cut: the node's addresses go first, so from that moment nothing answers
// for it (a powered-off machine does not refuse a connection, its peer's connects time out);
// then every process of the node is killed; its /run and /dev/shm go with its mount
// namespace, the disk (its overlay upper dirs) stays. The holder goes last: while it
// lives the namespace is known, so a process forked during a sweep is found by the next one
// (killing the holder first ended the sweeps early and left such a process running on the
// node's network namespace, where the node's next boot talked to its stale Pacemaker daemons).
func (n nodeSetup) powerOff() error {
	n.cancelPost()
	if err := n.addresses(false); err != nil {
		return err
	}
	for round := 0; round < 50; round++ {
		h := n.holder()
		if h == 0 {
			_ = os.Remove(n.path("holder"))
			return nil
		}
		targets := []int{h}
		if others := slices.DeleteFunc(n.processes(), func(pid int) bool { return pid == h }); len(others) > 0 {
			targets = others
		}
		for _, pid := range targets {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: processes still alive after SIGKILL: %v", n.Name, n.processes())
}

// boot starts the node as systemd would: a fresh mount namespace (overlays over /etc, /var/lib
// and /var/log that keep the node's disk, the tnf OCF provider and the layer's agents in
// /usr/sbin and /usr/libexec, empty /run and /dev/shm), then
// tnf-metrics.service, tnf-power-watch.service, tnf-setup.service, Corosync once
// corosync.conf exists, Pacemaker,
// and kube-apiserver and tnf-out-of-service.service where the layout has a kube-apiserver; the
// stand-in kubelet (before Corosync) and tnf-handover.service where the layout has them.
func (n nodeSetup) boot(bin string) error {
	var mounts []string
	if n.HARoot != "" {
		// Every program the node runs, the HA stack's and the shell's alike, is then the tree's:
		// the overlays below add the layer's files over its /usr. /etc, /var/lib and /var/log stay
		// the host's (its users, hacluster's uid among them), but for the libraries' cache.
		mounts = append(mounts, fmt.Sprintf("mount --bind %s/usr /usr", n.HARoot))
	}
	for _, d := range []string{"/etc", "/var/lib", "/var/log"} {
		key := strings.ReplaceAll(strings.Trim(d, "/"), "/", "-")
		up, work := n.path("disk", key), n.path("work", key)
		for _, p := range []string{up, work} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		}
		mounts = append(mounts, fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s", d, up, work, d))
	}
	if n.HARoot != "" {
		mounts = append(mounts, fmt.Sprintf("mount --bind %s/etc/ld.so.cache /etc/ld.so.cache", n.HARoot))
	}
	mounts = append(mounts,
		fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s:/usr/lib/ocf/resource.d /usr/lib/ocf/resource.d", n.path("ocf")),
		fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s:/usr/sbin /usr/sbin", n.path("sbin")),
		fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s:/usr/libexec /usr/libexec", n.path("libexec")),
		"mount -t tmpfs -o mode=0755 tmpfs /run", "mount -t tmpfs tmpfs /dev/shm", "hostname "+n.Name)
	if n.Field {
		cgroups, err := cgroupMounts()
		if err != nil {
			return err
		}
		mounts = append(mounts, cgroups...)
	}
	script := "set -e; " + strings.Join(mounts, "; ") + "; echo $$ $(readlink /proc/self/ns/mnt) > " + n.path("holder.new") + "; exec sleep infinity"
	if _, err := start(n.path("log", "holder.out"), "ip", "netns", "exec", n.NetNS, "unshare", "-m", "-u", "--propagation", "private", "sh", "-c", script); err != nil {
		return err
	}
	if err := waitFile(n.path("holder.new"), 10*time.Second); err != nil {
		return fmt.Errorf("%s: the namespace holder did not come up: %w", n.Name, err)
	}
	if err := os.Rename(n.path("holder.new"), n.path("holder")); err != nil {
		return err
	}
	if err := n.addresses(true); err != nil {
		return err
	}
	if n.Field {
		if err := n.startCluster(); err != nil {
			return err
		}
		if n.Guest {
			if err := n.startMetrics(bin); err != nil {
				return err
			}
			if err := n.daemon("setup", filepath.Join(bin, "tnfctl"), "setup", "--wait", "1m"); err != nil {
				return err
			}
		}
		if len(n.APIServer) == 0 {
			return nil
		}
		return n.daemon("kube-apiserver", n.APIServer...)
	}
	if err := n.startMetrics(bin); err != nil {
		return err
	}
	// tnf-power-watch.service, in the releases that have it.
	if exec.Command(filepath.Join(bin, "tnfctl"), "power-watch", "--help").Run() == nil {
		if err := n.daemon("power-watch", filepath.Join(bin, "tnfctl"), "power-watch"); err != nil {
			return err
		}
	}
	// tnf-setup.service: at every boot, applying what changed since the last completed run; a
	// release before --if-changed ran it only until it had completed once.
	if exec.Command(filepath.Join(bin, "tnfctl"), "setup", "--if-changed", "--help").Run() == nil {
		if err := n.daemon("setup", filepath.Join(bin, "tnfctl"), "setup", "--if-changed", "--wait", "10m"); err != nil {
			return err
		}
	} else if _, err := os.Stat(n.path("disk", "var-lib", "tnf", "setup.done")); err != nil {
		if err := n.daemon("setup", filepath.Join(bin, "tnfctl"), "setup", "--wait", "10m"); err != nil {
			return err
		}
	}
	if n.StaticPods != "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		if err := n.daemon("kubelet", self, "tnf-kubelet", n.StaticPods); err != nil {
			return err
		}
	}
	if n.SecretsFromAPI {
		if err := n.startAPI(bin); err != nil {
			return err
		}
		if err := n.startClusterOnceConfigured(); err != nil {
			return err
		}
	} else {
		if err := waitFile(n.path("disk", "etc", "corosync", "corosync.conf"), 20*time.Second); err != nil {
			return fmt.Errorf("%s: no corosync.conf: %w", n.Name, err)
		}
		if err := n.startCluster(); err != nil {
			return err
		}
		if err := n.startAPI(bin); err != nil {
			return err
		}
	}
	// tnf-publish-status.service, where the node has a credential, in the releases that have it.
	if len(n.PublishStatus) > 0 {
		if err := n.daemon("publish-status", n.PublishStatus...); err != nil {
			return err
		}
	} else if n.SecretsFromAPI && exec.Command(filepath.Join(bin, "tnfctl"), "publish-status", "--help").Run() == nil {
		if err := n.daemon("publish-status", filepath.Join(bin, "tnfctl"), "publish-status"); err != nil {
			return err
		}
	}
	if len(n.Handover) > 0 {
		return n.daemon("handover", n.Handover...)
	}
	return nil
}

// startMetrics starts tnf-metrics.service: it serves from boot on, inert or not; in plain HTTP to
// the management network, where the tests' Prometheus scrapes it: the nodes have no serving
// certificate and no API to review its callers (TestMetricsEndpointAuth serves it securely).
func (n nodeSetup) startMetrics(bin string) error {
	return n.daemon("metrics", filepath.Join(bin, "tnfctl"), "metrics", "--insecure-plaintext")
}

// cgroupMounts mount the host's cgroup hierarchies again in a node: `ip netns exec` gives the
// node a sysfs of its own, without them, and podman's runtime needs them. The same options name
// the same hierarchies, so a container's cgroups are the host's. They are read from the host's
// init: a boot after a fencing's power-on runs in the BMC's namespace, whose sysfs has none.
func cgroupMounts() ([]string, error) {
	data, err := os.ReadFile("/proc/1/mounts")
	if err != nil {
		return nil, err
	}
	mounts := []string{"mount -t tmpfs -o mode=0755 cgroup /sys/fs/cgroup"}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || (f[2] != "cgroup" && f[2] != "cgroup2") || !strings.HasPrefix(f[1], "/sys/fs/cgroup") {
			continue
		}
		if f[1] == "/sys/fs/cgroup" { // the unified hierarchy alone
			return []string{"mount -t cgroup2 -o " + f[3] + " cgroup /sys/fs/cgroup"}, nil
		}
		mounts = append(mounts, fmt.Sprintf("mkdir -p %s && mount -t %s -o %s cgroup %s", f[1], f[2], f[3], f[1]))
	}
	if len(mounts) == 1 {
		return nil, fmt.Errorf("no cgroup hierarchy under /sys/fs/cgroup in /proc/1/mounts")
	}
	return mounts, nil
}

// addresses gives the node its addresses (on) or takes them all (off); the links stay as they
// are (a cable cut is the link's state, and outlives a reboot). A node can lose its power twice:
// flushing a device without addresses is no error.
func (n nodeSetup) addresses(on bool) error {
	for dev, addr := range n.Addrs {
		args := []string{"-n", n.NetNS, "-4", "addr", "flush", "dev", dev}
		if on {
			args = []string{"-n", n.NetNS, "addr", "replace", addr, "dev", dev}
		}
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: ip %s: %v: %s", n.Name, strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// startAPI starts kube-apiserver and tnf-out-of-service.service where the layout has a
// kube-apiserver: the out-of-service taint goes through it.
func (n nodeSetup) startAPI(bin string) error {
	if len(n.APIServer) == 0 {
		return nil
	}
	if err := n.daemon("kube-apiserver", n.APIServer...); err != nil {
		return err
	}
	return n.daemon("out-of-service", filepath.Join(bin, "tnfctl"), "out-of-service")
}

// startClusterOnceConfigured is startCluster for a node whose setup writes its configuration
// late: Corosync starts once a cluster's corosync.conf is there (setup's, or the one the
// cluster-etcd-operator's jobs wrote, cluster TNF; the host's own shows through the overlay from
// the start), Pacemaker once Corosync answers; each waits at most 10 minutes (setup's own wait).
func (n nodeSetup) startClusterOnceConfigured() error {
	const wait = `for i in $(seq 1200); do if %s; then exec "$@"; fi; sleep 0.5; done; exit 1`
	if err := n.daemon("corosync", "sh", "-c", fmt.Sprintf(wait, "grep -qsE 'cluster_name: (tnf-test|TNF)$' /etc/corosync/corosync.conf"), "corosync", "corosync", "-f"); err != nil {
		return err
	}
	return n.daemon("pacemakerd", "sh", "-c", fmt.Sprintf(wait, "corosync-cmapctl -g totem.cluster_name >/dev/null 2>&1"), "pacemakerd", "pacemakerd")
}

// startCluster starts Corosync, then Pacemaker, as their units do.
func (n nodeSetup) startCluster() error {
	if err := n.daemon("corosync", "corosync", "-f"); err != nil {
		return err
	}
	return n.daemon("pacemakerd", "pacemakerd")
}

// stopCluster stops the cluster stack cleanly, as systemd does at a reboot or a `pcs cluster
// stop`: SIGTERM to pacemakerd (pacemaker.service's stop), which stops every resource Pacemaker
// runs here and then its daemons; then `corosync-cfgtool -H --force` (corosync.service's stop).
// Each waits for the daemon's exit, bounded.
func (n nodeSetup) stopCluster() error {
	for _, d := range []struct {
		name string
		stop func(pid int) error
	}{
		{"pacemakerd", func(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }},
		{"corosync", func(int) error { return n.exec("corosync-cfgtool", "-H", "--force") }},
	} {
		pid := n.daemonPID(d.name)
		if pid == 0 {
			continue
		}
		if err := d.stop(pid); err != nil {
			return fmt.Errorf("%s: stopping %s: %w", n.Name, d.name, err)
		}
		if !waitGone(pid, 5*time.Minute) {
			return fmt.Errorf("%s: %s (pid %d) did not stop within 5 minutes", n.Name, d.name, pid)
		}
	}
	return nil
}

// daemon starts argv inside the node, detached, its output appended to log/<name>.out, and
// keeps its PID in pid/<name>.
func (n nodeSetup) daemon(name string, argv ...string) error {
	h := n.holder()
	if h == 0 {
		return fmt.Errorf("%s is off", n.Name)
	}
	pid, err := start(n.path("log", name+".out"), append([]string{"nsenter", "-t", strconv.Itoa(h), "-m", "-n", "-u", "--"}, argv...)...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(n.path("pid"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(n.path("pid", name), []byte(strconv.Itoa(pid)), 0o644)
}

// daemonPID is the PID daemon recorded for name if that process still runs in this boot of the
// node (nsenter execs the daemon, so it is the daemon's own PID), else 0.
func (n nodeSetup) daemonPID(name string) int {
	pid, _ := strconv.Atoi(readFile(n.path("pid", name)))
	if pid <= 0 || !slices.Contains(n.processes(), pid) {
		return 0
	}
	return pid
}

// exec runs argv inside the node and waits for it.
func (n nodeSetup) exec(argv ...string) error {
	h := n.holder()
	if h == 0 {
		return fmt.Errorf("%s is off", n.Name)
	}
	out, err := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(h), "-m", "-n", "-u", "--"}, argv...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// waitGone polls until pid has exited, for at most limit.
func waitGone(pid int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
	}
	return false
}

// start runs argv in its own session with output to logFile and does not wait: the node's
// power-off stops it, by PID.
func start(logFile string, argv ...string) (int, error) {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	return pid, cmd.Process.Release()
}

func waitFile(path string, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s did not appear within %v", path, limit)
}
