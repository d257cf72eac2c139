//go:build boot

package boot_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/redfish"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/test/poll"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
)

// The lab's addresses, as ci/lab.sh's tnf.yaml has them: node IPs on the private cluster L2, the
// emulator at 10.0.2.2:8443 as QEMU's user-mode network shows the host's loopback.
const (
	bmcListen = "127.0.0.1:8443"
	guestMgmt = "10.0.2.15"
)

var nodeNames = []string{"node1", "node2"}

// lab is two machines, their BMCs (one emulator process) and the switch between them.
type lab struct {
	t        testing.TB
	dir      string
	emulator *exec.Cmd
	sw       *l2switch
	vms      map[string]*vm
	etcdTLS  *tls.Config // set when the guests' etcd serves TLS
}

// vm is one machine as the test sees it.
type vm struct {
	name, ip  string
	systemID  string
	sshAddr   string // loopback port forwarded to the guest's port 22
	console   string // the serial console, appended over every power-on
	pidFile   string // the running QEMU's PID, written by the emulator
	bmc       *bmc.Client
	sshClient *sshConn
}

// newLab makes a fresh overlay disk over base per machine and starts the emulator (machines off)
// and the switch. Everything is stopped by PID when the test ends, also when it fails.
func newLab(t testing.TB, base string) *lab {
	t.Helper()
	l := &lab{t: t, dir: t.TempDir(), vms: map[string]*vm{}}
	var err error
	if l.sw, err = newL2Switch(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.sw.close)
	// While a test runs, a person can look inside: ssh -i DIR/id_ed25519 -p PORT root@127.0.0.1
	// (the ports are in DIR/emulator.yaml).
	if err := os.WriteFile(filepath.Join(l.dir, "id_ed25519"), image.key, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := emulator.Config{Listen: bmcListen, TLS: emulator.TLS{CertOut: l.dir}}
	for i, name := range nodeNames {
		v := &vm{name: name, ip: fmt.Sprintf("192.168.122.1%d", i+1), systemID: strconv.Itoa(i + 1),
			console: filepath.Join(l.dir, name+".console"), pidFile: filepath.Join(l.dir, name+".qemu.pid")}
		if v.sshAddr, err = freePort("tcp"); err != nil {
			t.Fatal(err)
		}
		disk := filepath.Join(l.dir, name+".qcow2")
		if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", base, disk).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img: %v: %s", err, out)
		}
		cmd := l.qemuCommand(v, i, disk)
		// The guest's NICs (qemuCommand), as a BMC lists its machine's: the race winner's setup
		// checks each BMC entry reaches its node by them (TCG guests have no SMBIOS UUID).
		cfg.Systems = append(cfg.Systems, emulator.System{ID: v.systemID, Name: name, Username: "admin",
			PasswordFile: filepath.Join(image.cluster, name+".password"), MACs: []string{guestMAC(1, i), guestMAC(2, i)},
			Power: emulator.Power{Backend: "qemu", QEMU: emulator.QEMUPower{Command: cmd,
				Console: filepath.Join(l.dir, name+".qemu.log"), PIDFile: v.pidFile}}})
		l.vms[name] = v
	}
	l.startEmulator(cfg)
	for _, v := range l.vms {
		pw, err := os.ReadFile(filepath.Join(image.cluster, v.name+".password"))
		if err != nil {
			t.Fatal(err)
		}
		addr, err := bmc.ParseAddress("bmc", "redfish+https://"+bmcListen+"/redfish/v1/Systems/"+v.systemID)
		if err != nil {
			t.Fatal(err)
		}
		// The test reaches the emulator at the address its certificate names, signed by the CA
		// it wrote at start: the test checks what the guests, on 10.0.2.2, cannot.
		v.bmc, err = bmc.Connect(context.Background(), bmc.Credential{Address: addr, Username: "admin",
			Password: strings.TrimSpace(string(pw)), VerifyCertificate: true, CAFile: filepath.Join(l.dir, "ca.pem")},
			bmc.Options{Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s's BMC: %v", v.name, err)
		}
		t.Cleanup(v.bmc.Close)
		v.sshClient = &sshConn{addr: v.sshAddr}
		t.Cleanup(v.sshClient.close)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, n := range nodeNames {
			out, err := l.vms[n].sshClient.run("journalctl --no-pager --list-boots; journalctl --no-pager -n 60 -u tnf-setup.service -u tnf-auto-unblock.service -u corosync.service -u pacemaker.service; crm_mon -1")
			if err != nil {
				out = fmt.Sprintf("(%v) console, last lines:\n%s", err, tailFile(l.vms[n].console, 40))
			}
			t.Logf("%s:\n%s", n, out)
		}
	})
	return l
}

// qemuCommand is machine i's QEMU command line (the emulator adds -qmp): 1 vCPU and 1 GiB
// under TCG, the image's kernel and initrd, the overlay disk, a user-mode NIC for the BMCs and
// the test's SSH, and a NIC on the switch. Network settings come from the kernel command line
// (systemd-network-generator reads ip=), the host name from systemd.hostname=.
func (l *lab) qemuCommand(v *vm, i int, disk string) []string {
	port := l.sw.ports[i]
	_, sshPort, _ := net.SplitHostPort(v.sshAddr)
	cmdline := strings.Join([]string{
		"root=/dev/vda", "rw", "console=ttyS0", "net.ifnames=0", "systemd.hostname=" + v.name,
		"ip=" + guestMgmt + "::10.0.2.2:255.255.255.0::eth0:off",
		"ip=" + v.ip + ":::255.255.255.0::eth1:off",
	}, " ")
	return []string{"qemu-system-x86_64", "-accel", "tcg", "-machine", "pc", "-smp", "1", "-m", "1024",
		"-nodefaults", "-no-user-config", "-display", "none", "-rtc", "base=utc",
		"-kernel", image.boot.Kernel, "-initrd", image.boot.Initrd, "-append", cmdline,
		"-drive", "file=" + disk + ",if=virtio,format=qcow2,cache=unsafe",
		"-netdev", "user,id=mgmt,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:" + sshPort + "-:22",
		"-device", "virtio-net-pci,netdev=mgmt,mac=" + guestMAC(1, i),
		"-netdev", "dgram,id=l2,local.type=inet,local.host=127.0.0.1,local.port=" + strconv.Itoa(port.vm) +
			",remote.type=inet,remote.host=127.0.0.1,remote.port=" + strconv.Itoa(port.sw),
		"-device", "virtio-net-pci,netdev=l2,mac=" + guestMAC(2, i),
		"-device", "virtio-rng-pci",
		"-chardev", "file,id=console,path=" + v.console + ",append=on", "-serial", "chardev:console",
	}
}

func (l *lab) startEmulator(cfg emulator.Config) {
	l.t.Helper()
	data, err := yaml.Marshal(cfg)
	if err != nil {
		l.t.Fatal(err)
	}
	conf := filepath.Join(l.dir, "emulator.yaml")
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		l.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(l.dir, "emulator.log"))
	if err != nil {
		l.t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(image.bin, "redfish-emulator"), "--config", conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.emulator = cmd
	l.t.Cleanup(l.stopEmulator)
	poll.Until(l.t, "the emulator listens on "+bmcListen, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		c, err := net.DialTimeout("tcp", bmcListen, time.Second)
		if err == nil {
			c.Close()
			return true, ""
		}
		return false, fmt.Sprintf("%v; %s", err, tailFile(filepath.Join(l.dir, "emulator.log"), 5))
	})
}

// stopEmulator ends the emulator by its PID (it cuts its machines' power on the way out), then
// any QEMU it left behind, by the PID in its file.
func (l *lab) stopEmulator() {
	_ = l.emulator.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { l.emulator.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = l.emulator.Process.Kill()
		<-done
	}
	for _, v := range l.vms {
		b, err := os.ReadFile(v.pidFile)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// power presses a machine's Redfish reset button through the emulator, as an operator (or the
// fault) would from outside.
func (l *lab) power(name string, r redfish.ResetType) {
	l.t.Helper()
	if err := l.vms[name].bmc.Reset(r); err != nil {
		l.t.Fatalf("%s: %s: %v", name, r, err)
	}
	l.vms[name].sshClient.close()
	l.t.Logf("%s: %s", name, r)
}

func (l *lab) powerState(name string) redfish.PowerState {
	st, err := l.vms[name].bmc.PowerState()
	if err != nil {
		return ""
	}
	return st
}

// l2switch is the private L2 between the machines: each QEMU's dgram NIC sends to its switch
// port, and the switch forwards to the other machine unless the link is cut. A switch failure,
// not a carrier loss: the guests' NICs stay up.
type l2switch struct {
	ports [2]struct {
		sw, vm int
		conn   *net.UDPConn
	}
	cut atomic.Bool
}

func newL2Switch() (*l2switch, error) {
	s := &l2switch{}
	for i := range s.ports {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, err
		}
		s.ports[i].conn, s.ports[i].sw = c, c.LocalAddr().(*net.UDPAddr).Port
		vmAddr, err := freePort("udp")
		if err != nil {
			return nil, err
		}
		_, p, _ := net.SplitHostPort(vmAddr)
		s.ports[i].vm, _ = strconv.Atoi(p)
	}
	for i := range s.ports {
		go s.forward(i, 1-i)
	}
	return s, nil
}

// forward copies frames from port from to the machine on port to, until the switch is closed.
func (s *l2switch) forward(from, to int) {
	buf := make([]byte, 65536)
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: s.ports[to].vm}
	for {
		n, _, err := s.ports[from].conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if !s.cut.Load() {
			_, _ = s.ports[to].conn.WriteToUDP(buf[:n], dst)
		}
	}
}

func (s *l2switch) close() {
	for i := range s.ports {
		s.ports[i].conn.Close()
	}
}

// tailFile is the last n lines of a file, for failure messages.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// guestMAC is the address of guest i's NIC on network net (1: management, 2: the nodes' link).
func guestMAC(net, i int) string { return fmt.Sprintf("52:54:00:00:%02x:%02x", net, i+1) }
