//go:build integration

package podman

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

// TestOperatorCommandLineRunsEtcd runs the real etcd (testbin.Etcd: 3.5 or 3.6) with the command
// line and environment resolved from the operator's manifest of a release that ships that etcd
// (4.19: 3.5, 4.21: 3.6), as the container would (paths in the
// container mapped back through the mounts; podman itself is not on the test machines), in a
// network namespace of its own holding the node's address. etcd must start (no flag it refuses,
// no flag with its environment twin), and serve what the static pod's other containers use:
// TLS with client certificates on the loopback address (etcd-readyz, kube-apiserver) and on
// the node's, and the metrics listener on 9978 (etcd-metrics' proxy).
func TestOperatorCommandLineRunsEtcd(t *testing.T) {
	out, err := exec.Command(testbin.Etcd(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for manifest, release := range operatorManifests {
		if strings.Contains(string(out), "etcd Version: "+release.etcd+".") {
			t.Run(filepath.Base(manifest), func(t *testing.T) { runOperatorCommandLine(t, manifest) })
			ran++
		}
	}
	if ran == 0 {
		t.Fatalf("no manifest of a release shipping %s", strings.SplitN(string(out), "\n", 2)[0])
	}
}

func runOperatorCommandLine(t *testing.T, manifest string) {
	root, moved := hostLayout(t, manifest)
	certs := filepath.Join(root, "etc/kubernetes/static-pod-resources/etcd-certs")
	// One self-signed certificate for serving, peer and CA: etcd's own generator, for the
	// node's address and the loopback one (it takes host:port).
	info, err := transport.SelfCert(zap.NewNop(), t.TempDir(), []string{"192.0.2.10:2379", "127.0.0.1:2379", "localhost:2379"}, 1, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	for src, dsts := range map[string][]string{
		info.CertFile: {"secrets/etcd-all-certs/etcd-serving-master-0.crt", "secrets/etcd-all-certs/etcd-peer-master-0.crt", "configmaps/etcd-all-bundles/server-ca-bundle.crt"},
		info.KeyFile:  {"secrets/etcd-all-certs/etcd-serving-master-0.key", "secrets/etcd-all-certs/etcd-peer-master-0.key"},
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dsts {
			if err := os.WriteFile(filepath.Join(certs, d), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := etcdrun.Spec{Name: "master-0", DataDir: root + "/var/lib/etcd",
		ClientURLs: []string{"https://192.0.2.10:2379"}, PeerURL: "https://192.0.2.10:2380",
		InitialCluster: map[string]string{"master-0": "https://192.0.2.10:2380"}, ClusterState: "new", TLS: manifestTLS(t, moved)}
	run := resolve(t, moved, s)
	etcdArgs := make([]string, len(run.etcd))
	for i, a := range run.etcd {
		name, value, ok := strings.Cut(a, "=")
		if host, inMount := run.onHost(value); ok && strings.HasPrefix(value, "/") && inMount {
			a = name + "=" + host
		}
		etcdArgs[i] = a
	}
	env := []string{"PATH=/usr/bin:/bin"}
	for k, v := range run.env {
		env = append(env, k+"="+v)
	}
	logPath := filepath.Join(t.TempDir(), "etcd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command("unshare", append([]string{"--net", "sh", "-c",
		`ip link set lo up && ip addr add 192.0.2.10/32 dev lo && exec "$0" "$@"`, testbin.Etcd(t)}, etcdArgs...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	client := &tls.Config{Certificates: []tls.Certificate{loadPair(t, info.CertFile, info.KeyFile)}, RootCAs: poolOf(t, info.CertFile)}
	for _, target := range []struct{ addr, path, want string }{
		{"127.0.0.1:2379", "/health", `"health":"true"`},
		{"192.0.2.10:2379", "/health", `"health":"true"`},
		{"192.0.2.10:9978", "/metrics", "grpc_server_handling_seconds"},
	} {
		var body string
		for try := 0; try < 300; try++ {
			select {
			case err := <-exited:
				log, _ := os.ReadFile(logPath)
				t.Fatalf("etcd exited (%v):\n%s", err, tail(string(log), 30))
			default:
			}
			if body, err = getInNetns(cmd.Process.Pid, target.addr, target.path, client); err == nil && strings.Contains(body, target.want) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !strings.Contains(body, target.want) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("https://%s%s: %v, %.200q; etcd log:\n%s", target.addr, target.path, err, body, tail(string(log), 30))
		}
	}
	log, _ := os.ReadFile(logPath)
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "unrecognized environment variable") {
			t.Logf("%s", l)
		}
	}
}

// getInNetns fetches https://addr/path from inside the network namespace of process pid. The
// connection is made on a thread moved into that namespace (a socket belongs to the namespace
// it was made in); the thread ends with the goroutine.
func getInNetns(pid int, addr, path string, conf *tls.Config) (string, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	made := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded when the goroutine ends
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			made <- result{nil, err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			made <- result{nil, err}
			return
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		made <- result{c, err}
	}()
	r := <-made
	if r.err != nil {
		return "", r.err
	}
	defer r.conn.Close()
	_ = r.conn.SetDeadline(time.Now().Add(5 * time.Second))
	host, _, _ := net.SplitHostPort(addr)
	conf = conf.Clone()
	conf.ServerName = host
	tc := tls.Client(r.conn, conf)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return "", err
	}
	req, _ := http.NewRequest("GET", "https://"+addr+path, nil)
	if err := req.Write(tc); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String(), err
}

func loadPair(t *testing.T, cert, key string) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func poolOf(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(data)
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
