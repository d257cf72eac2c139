//go:build integration

package cluster_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/shellquote"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/poll"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
	"github.com/tnf-layer/tnf-layer/test/testca"
)

const (
	bmcIP     = "10.77.0.1"
	bmcPort   = "8443"
	adminPort = "8080"
	bmcUser   = "admin"
	nodeIPs   = "192.168.77."
	mgmtIPs   = "10.77.0."
	settle    = 4 * time.Minute // longest wait for the cluster to reach an expected state
	etcdPort  = "2379"
	// standInAgent runs cri-o's and kubelet's stand-ins (testdata/standin).
	standInAgent = "ocf:tnf-test:standin"
)

//go:embed testdata/standin
var standIn []byte

type cluster struct {
	t      *failureLog
	dir    string
	bin    string
	layout layout
	nodes  []string // node1 (the fence race winner), node2
	ip     map[string]string
	bmcNS  string
	emuPID int
	// etcdTLS is the test's etcd client configuration where etcd serves over TLS (the API
	// scenarios); nil: plain HTTP.
	etcdTLS *tls.Config
	api     *apiAccess // the API scenarios' access to kube-apiserver
	// input is the node configuration with its secrets, as build-layer reads it.
	input clusterconfig.Input
	// bmcPin is the SHA-256 of the BMC emulator's certificate, which names no address, as most
	// BMCs' do not: cluster.yaml pins it, so the first fencing level may prove a node off.
	bmcPin string
	// defects are the API's defects seen on the field's stack (apiDefects); on the layer's
	// clusters each fails the test instead.
	defects apiDefects
}

// newCluster makes the namespaces, the links, the BMC emulator and each node's disk with its
// /etc/tnf. The nodes are off.
func newCluster(t testing.TB, change func(*clusterconfig.Config)) *cluster {
	dir, err := os.MkdirTemp("", "tnf-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	// The namespaces are named after this cluster's directory, never reused by the next test: a
	// power action the emulator started late (waiting for the node's power lock) acts on the
	// namespaces its layout names, and must find nothing of a later cluster there.
	id := clusterID(dir)
	bin := testbin.Dir(t)
	c := &cluster{t: &failureLog{TB: t}, dir: dir, bin: bin, nodes: []string{"node1", "node2"}, ip: map[string]string{},
		bmcNS: id + "-bmc", layout: layout{Bin: bin, Nodes: map[string]nodeSetup{}}}
	t.Cleanup(c.teardown)
	c.write(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
	c.must("ip", "netns", "add", c.bmcNS)
	c.inNS(c.bmcNS, "ip", "link", "set", "lo", "up")
	c.inNS(c.bmcNS, "ip", "link", "add", "br0", "type", "bridge")
	c.inNS(c.bmcNS, "ip", "addr", "add", bmcIP+"/24", "dev", "br0")
	c.inNS(c.bmcNS, "ip", "link", "set", "br0", "up")
	for i, name := range c.nodes {
		c.ip[name] = fmt.Sprintf("%s%d", nodeIPs, i+1)
		// The addresses are the node's while it is powered on (node_test.go's boot and powerOff).
		n := nodeSetup{Name: name, NetNS: fmt.Sprintf("%s-%s", id, name), Dir: filepath.Join(dir, name),
			Addrs:  map[string]string{"mgmt": fmt.Sprintf("%s%d/24", mgmtIPs, 11+i), "cl": c.ip[name] + "/24"},
			HARoot: haRoot(t)}
		c.layout.Nodes[name] = n
		c.must("ip", "netns", "add", n.NetNS)
		c.inNS(n.NetNS, "ip", "link", "set", "lo", "up")
		// Management link to the BMC network.
		c.must("ip", "link", "add", "mgmt", "netns", n.NetNS, "type", "veth", "peer", "name", "b-"+name, "netns", c.bmcNS)
		c.inNS(c.bmcNS, "ip", "link", "set", "b-"+name, "master", "br0", "up")
		c.inNS(n.NetNS, "ip", "link", "set", "mgmt", "up")
		c.write(filepath.Join(n.Dir, "ocf", "tnf-test", "standin"), standIn, 0o755)
		c.installAgents(n, c.bin)
	}
	// The cluster link.
	n1, n2 := c.layout.Nodes["node1"], c.layout.Nodes["node2"]
	c.must("ip", "link", "add", "cl", "netns", n1.NetNS, "type", "veth", "peer", "name", "cl", "netns", n2.NetNS)
	for _, name := range c.nodes {
		// A known address: the BMC emulator lists it as the machine's NIC, which is how the
		// race winner's setup tells that each BMC entry reaches its own node.
		c.inNS(c.layout.Nodes[name].NetNS, "ip", "link", "set", "cl", "address", nodeMAC(name))
		c.inNS(c.layout.Nodes[name].NetNS, "ip", "link", "set", "cl", "up")
	}
	c.writeLayout()
	c.bmcCertificate()
	c.writeNodeConfig(change)
	c.startEmulator()
	return c
}

// nodeMAC is the address of node's cluster link (node1: 02:77:00:00:00:01): a namespace node has
// no SMBIOS UUID, so its NIC is what its BMC and it have in common.
func nodeMAC(node string) string {
	return "02:77:00:00:00:" + fmt.Sprintf("%02x", strings.TrimPrefix(node, "node")[0]-'0')
}

// bmcCertificate writes the BMC emulator's certificate, which names no address (verification
// against a CA would fail), and keeps its pin.
func (c *cluster) bmcCertificate() {
	ca, err := testca.New("BMC vendor CA")
	if err != nil {
		c.t.Fatal(err)
	}
	cert, key, err := ca.Issue("bmc.example")
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(filepath.Join(c.dir, "bmc", "cert.pem"), cert, 0o600)
	c.write(filepath.Join(c.dir, "bmc", "key.pem"), key, 0o600)
	block, _ := pem.Decode(cert)
	c.bmcPin = bmc.Pin(block.Bytes)
}

func (c *cluster) writeNodeConfig(change func(*clusterconfig.Config)) {
	cfg := clusterconfig.Config{ClusterName: "tnf-test", CorosyncAuthkeyFile: clusterconfig.AuthkeyFile}
	passwords := map[string]string{}
	for _, name := range c.nodes {
		passwords[name] = bmcPassword()
		cfg.Nodes = append(cfg.Nodes, clusterconfig.Node{Name: name, IP: c.ip[name], BMC: clusterconfig.BMC{
			Address:  fmt.Sprintf("redfish+https://%s:%s/redfish/v1/Systems/%s", bmcIP, bmcPort, name),
			Username: bmcUser, PasswordFile: clusterconfig.SecretsDir + "/" + name + ".password", CertificateVerification: "Disabled",
			CertificateSHA256: c.bmcPin}})
	}
	// cri-o and kubelet stand-ins: a sleep each (assertInert looks for it).
	cfg.Resources = clusterconfig.Resources{Crio: clusterconfig.Agent{Agent: standInAgent}, Kubelet: clusterconfig.Agent{Agent: standInAgent},
		// Plain etcd on the node addresses: the scenarios' test setting (the API scenarios turn
		// TLS on and drop it).
		Etcd: map[string]string{"etcd_binary": testbin.Etcd(c.t), "insecure_plaintext": "true"}}
	if change != nil {
		change(&cfg)
	}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		c.t.Fatal(err)
	}
	yml, err := cfg.Marshal()
	if err != nil {
		c.t.Fatal(err)
	}
	key := make([]byte, 256)
	_, _ = rand.Read(key)
	c.input = clusterconfig.Input{Config: cfg, Secrets: []clusterconfig.Secret{{Path: clusterconfig.AuthkeyFile, Data: []byte(base64.StdEncoding.EncodeToString(key) + "\n")}}}
	// Each password file holds its BMC's password: a change may swap the entries that name them.
	for _, name := range c.nodes {
		c.input.Secrets = append(c.input.Secrets, clusterconfig.Secret{Path: clusterconfig.SecretsDir + "/" + name + ".password", Data: []byte(passwords[name] + "\n")})
	}
	for _, name := range c.nodes {
		etc := filepath.Join(c.layout.Nodes[name].Dir, "disk", "etc", "tnf")
		c.write(filepath.Join(etc, "cluster.yaml"), yml, 0o644)
		if cfg.SecretsFromAPI != nil {
			continue // the nodes fetch them (waitAPIsAndDeliverSecrets)
		}
		for _, s := range c.input.Secrets {
			c.write(filepath.Join(etc, "secrets", filepath.Base(s.Path)), s.Data, 0o600)
		}
	}
	for n, pw := range passwords {
		c.write(filepath.Join(c.dir, "bmc", n+".password"), []byte(pw+"\n"), 0o600)
	}
}

// installAgents puts the agents of bin where node n's Pacemaker and pcs look for them: the etcd
// resource agent in its OCF folder (a link: ocf-etcd runs the tnf-etcd-agent beside the file it
// resolves to), the fence agents and the fencing alert agent (node_test.go's boot lays these
// folders over the host's); a fence agent bin lacks (a release before it) is taken away, as an
// update to that release would. Those are copies, not links: Pacemaker runs alerts as hacluster,
// who cannot follow a link into a checkout below a folder only root may enter (mktemp -d makes
// one), and the alert would never run.
func (c *cluster) installAgents(n nodeSetup, bin string) {
	c.t.Helper()
	ocf := filepath.Join(n.Dir, "ocf", "tnf", "etcd")
	if err := os.MkdirAll(filepath.Dir(ocf), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Remove(ocf); err != nil && !os.IsNotExist(err) {
		c.t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "ocf-etcd"), ocf); err != nil {
		c.t.Fatal(err)
	}
	for path, from := range map[string]string{
		filepath.Join(n.Dir, "sbin", "fence_tnf_poweroff"):          filepath.Join(bin, "fence_tnf_poweroff"),
		filepath.Join(n.Dir, "sbin", "fence_tnf_redfish"):           filepath.Join(bin, "fence_tnf_redfish"),
		filepath.Join(n.Dir, "libexec", "tnf", "tnf-fencing-alert"): filepath.Join(bin, "tnf-fencing-alert"),
	} {
		data, err := os.ReadFile(from)
		if os.IsNotExist(err) && strings.HasPrefix(filepath.Base(from), "fence_") {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				c.t.Fatal(err)
			}
			continue
		}
		if err != nil {
			c.t.Fatal(err)
		}
		c.write(path, data, 0o755)
	}
}

// bmcPassword is a new BMC password as hard to carry as the layer accepts (bmc.CheckPassword):
// the longest Pacemaker's secret store reads back whole, white space first, and the characters a
// shell, a key=value line, YAML or JSON take for syntax. Each scenario that fences, or checks its
// fence devices, proves real Pacemaker hands it to them whole. ASCII only: the previous release's
// second level is fence_redfish, which sends Basic credentials in latin-1 (a UTF-8 password
// fails there, TestRollingUpdateFromPrevious showed).
func bmcPassword() string {
	pw := " \t=:'\"$`\\#;&|<>{}[]*?!%~ password=" + randomText(bmc.MaxPassword)
	return pw[:bmc.MaxPassword]
}

func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (c *cluster) startEmulator() {
	self, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	cfg := emulator.Config{Listen: bmcIP + ":" + bmcPort, AdminListen: bmcIP + ":" + adminPort,
		TLS: emulator.TLS{Cert: filepath.Join(c.dir, "bmc", "cert.pem"), Key: filepath.Join(c.dir, "bmc", "key.pem")}}
	for _, n := range c.nodes {
		power := func(action string) []string { return []string{self, "tnf-power", action, c.dir, n} }
		cfg.Systems = append(cfg.Systems, emulator.System{ID: n, Username: bmcUser, PasswordFile: filepath.Join(c.dir, "bmc", n+".password"), MACs: []string{nodeMAC(n)},
			Power: emulator.Power{Backend: "exec", Exec: emulator.ExecPower{PowerOn: power("power-on"), PowerOff: power("off"), Status: power("status")}}})
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	path := filepath.Join(c.dir, "bmc", "emulator.yaml")
	c.write(path, data, 0o600)
	log, err := os.Create(filepath.Join(c.dir, "bmc", "emulator.log"))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", c.bmcNS, filepath.Join(c.bin, "redfish-emulator"), "--config", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.emuPID = cmd.Process.Pid
	go func() { _ = cmd.Wait(); log.Close() }()
	// Bounded wait for the port, from inside the BMC network.
	for i := 0; ; i++ {
		if conn, err := c.dial(c.bmcNS, bmcIP+":"+bmcPort); err == nil {
			conn.Close()
			return
		}
		if i == 100 {
			c.t.Fatalf("the emulator did not listen: %s", readTail(filepath.Join(c.dir, "bmc", "emulator.log")))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restartEmulator stops the BMC emulator by its PID and starts it again, reading its
// configuration (and the BMC passwords) anew.
func (c *cluster) restartEmulator() {
	c.t.Helper()
	c.stopEmulator()
	c.startEmulator()
}

// stopEmulator stops the BMC emulator by its PID: every BMC is unreachable until startEmulator.
func (c *cluster) stopEmulator() {
	c.t.Helper()
	if err := unix.Kill(c.emuPID, unix.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	for i := 0; unix.Kill(c.emuPID, 0) == nil; i++ {
		if i == 100 {
			c.t.Fatalf("the emulator (pid %d) did not exit", c.emuPID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.emuPID = 0
	c.t.Log("BMC emulator stopped: the BMCs are unreachable")
}

// dial connects from inside a network namespace: the socket is made on a thread that entered
// the namespace, and the thread is thrown away afterwards.
func (c *cluster) dial(netns, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		fd, err := unix.Open("/run/netns/"+netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			ch <- result{err: err}
			return
		}
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}

// writeLayout writes the layout where the power commands read it (readLayout).
func (c *cluster) writeLayout() {
	data, err := json.Marshal(c.layout)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(filepath.Join(c.dir, "layout.json"), data, 0o644)
}

func (c *cluster) write(path string, data []byte, mode os.FileMode) { writeFile(c.t, path, data, mode) }

// writeFile writes data to path, its folder made first.
func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) must(argv ...string) string {
	c.t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

func (c *cluster) inNS(ns string, argv ...string) string {
	c.t.Helper()
	return c.must(append([]string{"ip", "netns", "exec", ns}, argv...)...)
}

// power runs the same power command the emulator runs.
func (c *cluster) power(action, node string) {
	c.t.Helper()
	self, _ := os.Executable()
	c.must(self, "tnf-power", action, c.dir, node)
	c.t.Logf("%s: power %s", node, action)
}

// tnfctl runs the node's own tnfctl on node.
func (c *cluster) tnfctl(node string, args ...string) (string, error) {
	return c.run(node, append([]string{c.tnfctlPath(node)}, args...)...)
}

// tnfctlPath is the node's own tnfctl.
func (c *cluster) tnfctlPath(node string) string {
	return filepath.Join(c.layout.Nodes[node].agents(c.bin), "tnfctl")
}

// run runs a command inside a node, as an admin on it would.
func (c *cluster) run(node string, argv ...string) (string, error) {
	return c.runInput(node, nil, argv...)
}

// runInput is run with stdin read from input (none when nil).
func (c *cluster) runInput(node string, input io.Reader, argv ...string) (string, error) {
	return c.runWithin(node, 2*time.Minute, input, argv...)
}

// atTerminal runs a command inside a node at a terminal, as an admin types it, and answers its
// question with answer: util-linux's script gives it a pseudo-terminal, passes the answer on,
// and exits with the command's code. The output holds the question and the echoed answer.
func (c *cluster) atTerminal(node, answer string, argv ...string) (string, error) {
	// script runs the command with $SHELL -c: a POSIX shell, whatever the test's environment says.
	return c.runInput(node, strings.NewReader(answer+"\n"), "env", "SHELL=/bin/sh", "script", "--quiet", "--return", "--command", shellquote.Join(argv...), "/dev/null")
}

// runWithin is runInput for a command that may take up to limit.
func (c *cluster) runWithin(node string, limit time.Duration, input io.Reader, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd, err := c.nodeCommand(ctx, node, argv...)
	if err != nil {
		return "", err
	}
	cmd.Stdin = input
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// nodeCommand is argv to run inside node's namespaces.
func (c *cluster) nodeCommand(ctx context.Context, node string, argv ...string) (*exec.Cmd, error) {
	h := c.layout.Nodes[node].holder()
	if h == 0 {
		return nil, fmt.Errorf("%s is off", node)
	}
	return exec.CommandContext(ctx, "nsenter", append([]string{"-t", fmt.Sprint(h), "-m", "-n", "-u", "--"}, argv...)...), nil
}

// exitedWith says whether err is a command's exit with code.
func exitedWith(err error, code int) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == code
}

// statusRun is tnfctl status on node, and its exit code: 4 (degraded), 5 (not serving) and 6
// (failover off) are the state it read, not an error.
func (c *cluster) statusRun(node string, args ...string) (string, int, error) {
	out, err := c.tnfctl(node, append([]string{"status"}, args...)...)
	for _, code := range []int{health.ExitDegraded, health.ExitNotServing, health.ExitFailoverOff} {
		if exitedWith(err, code) {
			return out, code, nil
		}
	}
	return out, 0, err
}

// waitState waits until tnfctl status on node reads the state (health's: "blocked"…).
func (c *cluster) waitState(node, state string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("tnfctl status on %s: %s", node, state), settle, func() (bool, string) {
		out, _, err := c.statusRun(node, "-o", "json")
		var st struct {
			State string `json:"state"`
		}
		return err == nil && json.Unmarshal([]byte(out), &st) == nil && st.State == state, out
	})
}

// status is Pacemaker's and Corosync's view from node, through tnfctl status -o json.
func (c *cluster) status(node string) (pcmk.Membership, *pcmk.Status, error) {
	out, _, err := c.statusRun(node, "-o", "json")
	if err != nil {
		return pcmk.Membership{}, nil, fmt.Errorf("%v: %s", err, out)
	}
	var st struct {
		Corosync      pcmk.Membership `json:"corosync"`
		CorosyncError string          `json:"corosyncError"`
		Pacemaker     *pcmk.Status    `json:"pacemaker"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return pcmk.Membership{}, nil, fmt.Errorf("%v: %s", err, out)
	}
	if st.CorosyncError != "" {
		return pcmk.Membership{}, nil, fmt.Errorf("corosync: %s", st.CorosyncError)
	}
	return st.Corosync, st.Pacemaker, nil
}

// waitFor polls cond every second until it holds, for at most limit.
func (c *cluster) waitFor(what string, limit time.Duration, cond func() (bool, string)) time.Duration {
	c.t.Helper()
	return poll.Until(c.t, what, limit, time.Second, cond)
}

// roles waits until etcd has the given role on each node ("Promoted", "Stopped", …) as seen
// from the node named from.
func (c *cluster) waitRoles(from string, want map[string]string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("etcd roles %v seen from %s", want, from), settle, func() (bool, string) {
		_, st, err := c.status(from)
		if err != nil || st == nil {
			return false, fmt.Sprint(err)
		}
		for node, role := range want {
			if st.Role("etcd", node) != role {
				return false, fmt.Sprintf("%+v", st.Resources)
			}
		}
		return true, ""
	})
}

func readTail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

func (c *cluster) teardown() {
	for _, name := range c.nodes {
		if n, ok := c.layout.Nodes[name]; ok {
			if err := n.powerOff(); err != nil {
				c.t.Error(err)
			}
		}
	}
	if c.emuPID > 0 {
		_ = unix.Kill(c.emuPID, unix.SIGKILL)
	}
	// A node told of its own fencing stops its cluster stack for good: with power fencing that
	// means it was back before its fencing completed, which a machine's POST never allows.
	for _, name := range c.nodes {
		if log := readFile(c.pacemakerLog(name)); strings.Contains(log, "We were allegedly just fenced") {
			c.t.Errorf("%s's Pacemaker was told of its own fencing and stopped for good", name)
		}
	}
	if c.t.Failed() {
		for _, name := range c.nodes {
			for _, f := range []string{"log/setup.out", "disk/var-log/pacemaker/pacemaker.log", "disk/var-log/tnf-etcd.log"} {
				c.t.Logf("%s %s (tail):\n%s", name, f, readTail(filepath.Join(c.dir, name, f)))
			}
		}
		if os.Getenv("TNF_KEEP") != "" {
			c.t.note("the cluster's folder is kept: " + c.dir)
		}
		c.t.Log(c.t.summary())
	}
	deleteNamespaces(clusterID(c.dir))
	_ = os.Remove(filepath.Join(c.dir, ownerFile)) // stopped: nothing of it for reapAbandoned
	// TNF_KEEP=1 keeps a failed test's folder (its evidence); TNF_KEEP=always keeps every one.
	switch keep := os.Getenv("TNF_KEEP"); {
	case keep == "always" && !c.t.Failed():
		c.t.Logf("the cluster's folder is kept: %s", c.dir)
	case keep == "" || !c.t.Failed():
		_ = os.RemoveAll(c.dir)
	}
}
