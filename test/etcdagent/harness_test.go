//go:build integration

// Package etcdagent_test drives bin/ocf-etcd exactly as Pacemaker would (an action argument,
// OCF_RESKEY_* and notify variables in the environment) against real bin/etcd processes on
// loopback addresses. The two "nodes" share a file-backed attribute store in place of the CIB.
package etcdagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/prometheus/procfs"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// subnet gives every cluster its own pair of loopback addresses (127.0.N.1 and 127.0.N.2, N
// counted from the run's block), so ports never collide between tests or with anything else on
// the machine.
var subnet atomic.Int32

// make test runs this package on two etcd versions side by side: each run holds a block of
// subnetsPerBlock loopback subnets of its own, the first free one of loopbackBlocks (their
// bases), by an exclusive lock on a file named after the block, held while the process lives.
const subnetsPerBlock = 100

var (
	loopbackBlocks = []int32{10, 110}
	subnetBase     int32
	blockLock      *os.File // kept open: closing it, or its finalizer, would release the block
)

func TestMain(m *testing.M) {
	if err := lockLoopbackBlock(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func lockLoopbackBlock() error {
	for _, base := range loopbackBlocks {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("tnf-etcdagent-loopback-%d.lock", base)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			subnetBase, blockLock = base, f
			return nil
		}
		f.Close()
	}
	return fmt.Errorf("every block of loopback subnets (bases %v) is held by another run of this package", loopbackBlocks)
}

type cluster struct {
	t      testing.TB
	dir    string
	store  attrs.File
	nodes  map[string]*node
	caFile string // set when TLS is on
	// catchUp bounds the wait for a learner to catch up: 30 s, longer for large data.
	catchUp time.Duration
	// actions is every action's outcome, in order, logged once should the test fail (with -v, each
	// is logged as it ends): one log line per action would bury the failure's own message, which
	// make's summary of a failed pass finds among the first lines that name a file.
	actionsMu sync.Mutex
	actions   []string
}

type node struct {
	c        *cluster
	name, ip string
	dir      string
	agent    string // the ocf-etcd this node runs: bin/ocf-etcd unless a test gives it another release's
	params   map[string]string
	environ  map[string]string // further variables in every action's environment
	mu       sync.Mutex
	agentLog strings.Builder   // every action's stderr, in order
	ran      []actionRun       // every action, in order
	peak     *testproc.PeakRSS // set: every action runs under it, and its peak memory is recorded
}

// actionRun is one action's process: what it was, how long it ran and of that how long it
// waited for etcd (its "waited for etcd" lines), its peak resident memory (with node.peak).
type actionRun struct {
	action       string
	took, waited time.Duration
	maxRSS       int64 // bytes
}

var waitedLine = regexp.MustCompile(`msg="waited for etcd" .*\bwaited=(\S+)`)

// waitedIn sums the waits an action's log reports.
func waitedIn(log string) time.Duration {
	var sum time.Duration
	for _, m := range waitedLine.FindAllStringSubmatch(log, -1) {
		d, err := time.ParseDuration(m[1])
		if err == nil {
			sum += d
		}
	}
	return sum
}

func newCluster(t testing.TB) *cluster {
	n := subnetBase + subnet.Add(1)
	if n > subnetBase+subnetsPerBlock {
		t.Fatalf("more than %d clusters in one run: its block of loopback subnets is used up", subnetsPerBlock)
	}
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, store: attrs.File{Path: filepath.Join(dir, "cib.json")}, nodes: map[string]*node{}, catchUp: 30 * time.Second}
	ips := map[string]string{"node1": fmt.Sprintf("127.0.%d.1", n), "node2": fmt.Sprintf("127.0.%d.2", n)}
	ipMap := "node1:" + ips["node1"] + ";node2:" + ips["node2"]
	for _, name := range []string{"node1", "node2"} {
		nd := &node{c: c, name: name, ip: ips[name], dir: filepath.Join(dir, name), agent: testbin.Path(t, "ocf-etcd")}
		nd.params = map[string]string{
			"node_ip_map":     ipMap,
			"data_dir":        filepath.Join(nd.dir, "etcd"),
			"state_dir":       filepath.Join(nd.dir, "run"),
			"fencing_socket":  filepath.Join(nd.dir, "fencing", "alert.sock"),
			"log_file":        filepath.Join(nd.dir, "etcd.log"),
			"etcd_binary":     testbin.Etcd(t),
			"attribute_store": "file:" + c.store.Path,
			"request_timeout": "2",
		}
		c.nodes[name] = nd
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.powerOff()
		}
		if t.Failed() {
			t.Logf("the actions, in order:\n%s", strings.Join(c.actions, "\n"))
			for _, nd := range c.nodes {
				if log, err := os.ReadFile(nd.params["log_file"]); err == nil {
					t.Logf("%s etcd log (tail):\n%s", nd.name, tail(string(log), 3000))
				}
			}
		}
	})
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// env is the environment Pacemaker gives an action on this node.
func (n *node) env(extra map[string]string) map[string]string {
	env := map[string]string{"PATH": os.Getenv("PATH"), "OCF_ROOT": "/usr/lib/ocf", "OCF_RESOURCE_INSTANCE": "etcd",
		"OCF_RESKEY_CRM_meta_on_node": n.name, "OCF_RESKEY_CRM_meta_timeout": "60000"}
	for k, v := range n.params {
		env["OCF_RESKEY_"+k] = v
	}
	for k, v := range n.environ {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// run executes one action and returns its exit code and stderr.
func (n *node) run(action string, extra map[string]string) (int, string) {
	n.c.t.Helper()
	argv := []string{n.agent, action}
	if n.peak != nil {
		argv = n.peak.Wrap(argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for k, v := range n.env(extra) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	n.mu.Lock()
	n.agentLog.Write(stderr.Bytes())
	if cmd.ProcessState != nil {
		r := actionRun{action: action, took: took, waited: waitedIn(stderr.String())}
		if n.peak != nil {
			var perr error
			if r.maxRSS, perr = n.peak.Bytes(); perr != nil {
				n.c.t.Errorf("%s %s: %v", n.name, action, perr)
			}
		}
		n.ran = append(n.ran, r)
	}
	n.mu.Unlock()
	defer func() {
		outcome := fmt.Sprintf("%s %s: exit %d in %v", n.name, action, cmd.ProcessState.ExitCode(), took.Round(time.Millisecond))
		if testing.Verbose() {
			n.c.t.Log(outcome + "\n" + stderr.String())
			return
		}
		n.c.actionsMu.Lock()
		n.c.actions = append(n.c.actions, outcome)
		n.c.actionsMu.Unlock()
	}()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		n.c.t.Fatalf("%s %s: %v", n.name, action, err)
	}
	return code, stderr.String()
}

// must runs an action and fails the test unless it exits with want.
func (n *node) must(action string, want int) string {
	n.c.t.Helper()
	code, out := n.run(action, nil)
	if code != want {
		n.c.t.Fatalf("%s %s: exit %d, want %d\n%s", n.name, action, code, want, out)
	}
	return out
}

// notify sends a post notification for op on the given nodes.
func (n *node) notify(op string, unames ...string) string {
	n.c.t.Helper()
	code, out := n.run("notify", map[string]string{
		"OCF_RESKEY_CRM_meta_notify_type":             "post",
		"OCF_RESKEY_CRM_meta_notify_operation":        op,
		"OCF_RESKEY_CRM_meta_notify_" + op + "_uname": strings.Join(unames, " "),
	})
	if code != 0 {
		n.c.t.Fatalf("%s notify post-%s %v: exit %d\n%s", n.name, op, unames, code, out)
	}
	return out
}

func (n *node) score() (int, bool) {
	v, ok, err := n.c.store.Get(context.Background(), n.name, attrs.PromotionName("etcd"), attrs.Reboot)
	if err != nil {
		n.c.t.Fatal(err)
	}
	if !ok {
		return 0, false
	}
	s, _ := strconv.Atoi(v)
	return s, true
}

// failuresReported is how many failures of etcd were reported on n (attrs.File.ReportFailure).
func (n *node) failuresReported() int {
	v, _, err := n.c.store.Get(context.Background(), n.name, attrs.FailedName("etcd"), attrs.Reboot)
	if err != nil {
		n.c.t.Fatal(err)
	}
	count, _ := strconv.Atoi(v)
	return count
}

// pid is the etcd process the agent launched, or 0.
func (n *node) pid() int { return n.pidOf("etcd.pid") }

// pidOf reads a PID file the agent keeps in its state_dir (0: none).
func (n *node) pidOf(file string) int {
	data, err := os.ReadFile(filepath.Join(n.params["state_dir"], file))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.Fields(string(data))[0])
	return pid
}

// kill sends sig to the node's etcd (a crash when SIGKILL: its watcher sees it). A SIGSTOP
// returns once every thread of etcd is stopped: kill(2) returns before they are.
func (n *node) kill(sig syscall.Signal) {
	pid := n.pid()
	if sig == syscall.SIGSTOP && pid == 0 {
		n.c.t.Fatalf("%s: no etcd to stop (no etcd.pid)", n.name)
	}
	signalAndWait(pid, sig)
	if sig == syscall.SIGSTOP && !waitStopped(pid) {
		n.c.t.Fatalf("%s: etcd (pid %d) still runs 5 s after SIGSTOP", n.name, pid)
	}
}

// waitStopped reports whether every thread of pid is stopped within 5 s.
func waitStopped(pid int) bool {
	for range 200 {
		threads, err := procfs.AllThreads(pid)
		stopped := err == nil && len(threads) > 0
		for _, th := range threads {
			if st, err := th.Stat(); err != nil || (st.State != "T" && st.State != "t") {
				stopped = false
				break
			}
		}
		if stopped {
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

// powerOff kills what runs on the node: etcd's watcher, then etcd, and waits until etcd's ports
// are closed, as they are on a node without power: a killed etcd's main thread is a zombie
// before its last thread has closed the sockets (one in a snapshot's fsync of gigabytes).
func (n *node) powerOff() {
	signalAndWait(n.pidOf("watcher.pid"), syscall.SIGKILL)
	n.kill(syscall.SIGKILL)
	for _, port := range []string{"2379", "2380"} {
		addr := net.JoinHostPort(n.ip, port)
		untilFor(n.c.t, time.Minute, addr+" closed", func() bool { return !accepts(addr) })
	}
}

// accepts says something accepts TCP connections on addr.
func accepts(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err == nil {
		conn.Close()
	}
	return err == nil
}

func signalAndWait(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(pid, sig)
		if sig == syscall.SIGKILL {
			waitExit(pid)
		}
	}
}

func waitExit(pid int) {
	for i := 0; i < 200; i++ {
		p, err := procfs.NewProc(pid)
		if err != nil {
			return
		}
		if st, err := p.Stat(); err != nil || st.State == "Z" {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// fence is what fencing does to a node here: its etcd dies with the node, and the node's
// per-boot state (tmpfs) and reboot-lifetime attributes are gone.
func (n *node) fence() {
	n.powerOff()
	if err := os.RemoveAll(n.params["state_dir"]); err != nil {
		n.c.t.Fatal(err)
	}
	if err := n.c.store.NodeLeft(n.name); err != nil {
		n.c.t.Fatal(err)
	}
}

func (n *node) url() string {
	if n.c.caFile != "" {
		return "https://" + n.ip + ":2379"
	}
	return "http://" + n.ip + ":2379"
}

func (n *node) client() *clientv3.Client {
	n.c.t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{n.url()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(), TLS: n.clientTLS()})
	if err != nil {
		n.c.t.Fatal(err)
	}
	n.c.t.Cleanup(func() { cli.Close() })
	return cli
}

func ctx5() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// put writes a key through n and returns the revision of the write.
func (n *node) put(key, val string) int64 {
	n.c.t.Helper()
	ctx, cancel := ctx5()
	defer cancel()
	r, err := n.client().Put(ctx, key, val)
	if err != nil {
		n.c.t.Fatalf("put %s via %s: %v", key, n.name, err)
	}
	return r.Header.Revision
}

// status is n's endpoint status through cli.
func (n *node) status(cli *clientv3.Client) *clientv3.StatusResponse {
	n.c.t.Helper()
	ctx, cancel := ctx5()
	defer cancel()
	r, err := cli.Status(ctx, n.url())
	if err != nil {
		n.c.t.Fatalf("status of %s: %v", n.name, err)
	}
	return r
}

// keys reads every key from n's own copy (serializable), so it checks that node's data.
func (n *node) keys(prefix string) map[string]string {
	n.c.t.Helper()
	ctx, cancel := ctx5()
	defer cancel()
	r, err := n.client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSerializable())
	if err != nil {
		n.c.t.Fatalf("get via %s: %v", n.name, err)
	}
	out := map[string]string{}
	for _, kv := range r.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

// memberList is n's member list.
func (n *node) memberList() *clientv3.MemberListResponse {
	n.c.t.Helper()
	ctx, cancel := ctx5()
	defer cancel()
	r, err := n.client().MemberList(ctx)
	if err != nil {
		n.c.t.Fatal(err)
	}
	return r
}

// members returns name → learner of n's member list.
func (n *node) members() map[string]bool {
	n.c.t.Helper()
	r := n.memberList()
	out := map[string]bool{}
	for _, m := range r.Members {
		out[m.Name] = m.IsLearner
	}
	return out
}

// until polls cond for 30 s.
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	untilFor(t, 30*time.Second, what, cond)
}

// untilFor polls cond every 100 ms until limit has passed.
func untilFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting until %s", what)
}

func (c *cluster) dump() string {
	data, _ := os.ReadFile(c.store.Path)
	var v any
	_ = json.Unmarshal(data, &v)
	out, _ := json.MarshalIndent(v, "", " ")
	return string(out)
}
