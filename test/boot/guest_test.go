//go:build boot

package boot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/crypto/ssh"
	"google.golang.org/grpc"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// Limits of the waits under TCG (DESIGN.md §5: systemd running ≈ 42 s, pcs status ≈ 11 s; the
// cluster configuration's pcs commands took 4 to 6.5 min, a cold boot to two members up to 9 min
// after node 2 booted). Bounds, not targets: make boot-bench measures.
const (
	bootLimit   = 6 * time.Minute
	settleLimit = 20 * time.Minute
	etcdPort    = "2379"
)

// run runs a command in a guest, failing the test if it fails.
func (l *lab) run(name, cmd string) string {
	l.t.Helper()
	out, err := l.vms[name].sshClient.run(cmd)
	if err != nil {
		l.t.Fatalf("%s: %v", name, err)
	}
	return out
}

// powerOn switches a machine on and waits until systemd reports the boot finished.
func (l *lab) powerOn(name string) time.Time {
	l.t.Helper()
	on := time.Now()
	if l.powerState(name) != "On" {
		l.power(name, "On")
	}
	l.waitBooted(name)
	return on
}

func (l *lab) waitBooted(name string) {
	l.t.Helper()
	poll.Until(l.t, name+" booted (systemd running)", bootLimit, 2*time.Second, func() (bool, string) {
		out, err := l.vms[name].sshClient.run("systemctl is-system-running")
		state := strings.TrimSpace(out)
		return state == "running" || state == "degraded", fmt.Sprintf("%q %v", state, err)
	})
	// Where the boot's time went, for whoever reads the log.
	if out, err := l.vms[name].sshClient.run("systemd-analyze time; systemd-analyze blame | head -4"); err == nil {
		l.t.Logf("%s:\n%s", name, out)
	}
}

// status is tnfctl status -o json on a guest.
func (l *lab) status(name string) (pcmk.Membership, *pcmk.Status, error) {
	// Exit 4 (degraded) and 5 (not serving) are the state read, not an error.
	out, err := l.vms[name].sshClient.run("tnfctl status -o json; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 4 ] || [ $rc -eq 5 ]")
	if err != nil {
		return pcmk.Membership{}, nil, err
	}
	var st struct {
		Corosync  pcmk.Membership `json:"corosync"`
		Pacemaker *pcmk.Status    `json:"pacemaker"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return pcmk.Membership{}, nil, fmt.Errorf("%v: %s", err, out)
	}
	return st.Corosync, st.Pacemaker, nil
}

// waitRoles waits until etcd has the given role on each node, as seen from the node from.
func (l *lab) waitRoles(from string, want map[string]string) {
	l.t.Helper()
	poll.Until(l.t, fmt.Sprintf("etcd roles %v seen from %s", want, from), settleLimit, 3*time.Second, func() (bool, string) {
		_, st, err := l.status(from)
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

// fences counts target's successful fencing in node's fencing history.
func (l *lab) fences(node, target string) (int, error) {
	_, st, err := l.status(node)
	if err != nil || st == nil {
		return 0, fmt.Errorf("status on %s: %v", node, err)
	}
	return st.Fencing.Successes(target), nil
}

func (l *lab) waitFenced(by, target string, n int) {
	l.t.Helper()
	poll.Until(l.t, fmt.Sprintf("%s fenced %s (%d)", by, target, n), settleLimit, 3*time.Second, func() (bool, string) {
		got, err := l.fences(by, target)
		return err == nil && got == n, fmt.Sprintf("%d times, %v", got, err)
	})
}

// inertState is what a guest runs of what only Pacemaker may start: the cri-o and kubelet
// stand-in units and anything listening on etcd's client port. Empty when inert; an error when
// the guest could not be asked (that proves nothing either way).
func (l *lab) inertState(name string) (string, error) {
	l.t.Helper()
	out, err := l.vms[name].sshClient.run("systemctl is-active crio.service kubelet.service; ss -Hltn 'sport = :" + etcdPort + "'")
	var exit *ssh.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "", err
	}
	var running []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case i < 2 && line != "inactive" && line != "failed":
			running = append(running, []string{"crio", "kubelet"}[i]+": "+line)
		case i >= 2 && line != "":
			running = append(running, "listening: "+line)
		}
	}
	return strings.Join(running, "; "), nil
}

// stayInert checks for d that the guest runs none of cri-o, kubelet and etcd. A check that could
// not reach the guest is retried; three in a row fail the test, and so does a reboot of the
// guest meanwhile (it would have ended whatever ran).
func (l *lab) stayInert(name string, d time.Duration) {
	l.t.Helper()
	bootID := l.run(name, "cat /proc/sys/kernel/random/boot_id")
	failed := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Second) {
		s, err := l.inertState(name)
		switch {
		case err != nil && failed == 2:
			l.t.Fatalf("%s could not be checked three times in a row: %v", name, err)
		case err != nil:
			failed++
			l.t.Logf("%s: not checked: %v", name, err)
		case s != "":
			l.t.Fatalf("%s is not inert: %s", name, s)
		default:
			failed = 0
		}
	}
	if now := l.run(name, "cat /proc/sys/kernel/random/boot_id"); now != bootID {
		l.t.Fatalf("%s rebooted while it was watched inert", name)
	}
	l.t.Logf("%s stayed inert for %v", name, d)
}

// etcdClient reaches the guests' etcd through their SSH connections; the test closes it.
func (l *lab) etcdClient(nodes ...string) *clientv3.Client {
	l.t.Helper()
	cli, err := l.newEtcdClient(nodes...)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { cli.Close() })
	return cli
}

// newEtcdClient reaches the guests' etcd through their SSH connections; the caller closes it.
func (l *lab) newEtcdClient(nodes ...string) (*clientv3.Client, error) {
	byIP := map[string]*sshConn{}
	var eps []string
	scheme := "http"
	if l.etcdTLS != nil {
		scheme = "https"
	}
	for _, n := range nodes {
		byIP[l.vms[n].ip] = l.vms[n].sshClient
		eps = append(eps, scheme+"://"+l.vms[n].ip+":"+etcdPort)
	}
	return clientv3.New(clientv3.Config{
		Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop(), TLS: l.etcdTLS,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(_ context.Context, addr string) (net.Conn, error) {
			if i := strings.Index(addr, "://"); i >= 0 {
				addr = addr[i+3:]
			}
			host, _, _ := net.SplitHostPort(addr)
			return byIP[host].dial(addr)
		})},
	})
}
