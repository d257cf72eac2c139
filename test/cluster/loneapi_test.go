//go:build integration

package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	basepoll "github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testca"
)

// loneAPI is a real kube-apiserver on loopback over a real etcd of one member, without the two
// nodes: for the scenarios that test what a node reads from and proves to the API (its Secrets,
// the metrics endpoint's callers), which need no failover. Tokens are static (a token file), as
// an administrator's `oc create token` would be: user name → token.
type loneAPI struct {
	URL    string
	CAFile string
	ca     testca.CA
	tokens map[string]string
	admin  *rest.Config
}

// startLoneAPI starts etcd and kube-apiserver in a folder of the test; both are stopped by their
// PIDs when the test ends. users get a token each; "admin" is in system:masters.
func startLoneAPI(t *testing.T, users ...string) *loneAPI {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.New("tnf-test-api-ca")
	if err != nil {
		t.Fatal(err)
	}
	a := &loneAPI{CAFile: filepath.Join(dir, "ca.crt"), ca: ca, tokens: map[string]string{"admin": randomText(16)}}
	tokens := a.tokens["admin"] + ",admin,admin,system:masters\n"
	for _, u := range users {
		a.tokens[u] = randomText(16)
		tokens += a.tokens[u] + "," + u + "," + u + "\n"
	}
	cert, key, err := ca.Issue("kube-apiserver", net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.crt": ca.PEM(), "apiserver.crt": cert, "apiserver.key": key, "tokens.csv": []byte(tokens),
		"sa.key": serviceAccountKey(t)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	etcdClient, etcdPeer, apiPort := freePort(t), freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + etcdClient
	startProcess(t, filepath.Join(dir, "etcd.log"), testbin.Path(t, "etcd"), "--name=api-store", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+etcdPeer, "--initial-advertise-peer-urls=http://127.0.0.1:"+etcdPeer,
		"--initial-cluster=api-store=http://127.0.0.1:"+etcdPeer)
	f := func(name string) string { return filepath.Join(dir, name) }
	startProcess(t, filepath.Join(dir, "kube-apiserver.log"), testbin.Path(t, "kube-apiserver"),
		"--advertise-address=127.0.0.1", "--bind-address=127.0.0.1", "--secure-port="+apiPort,
		"--etcd-servers="+etcdURL, "--etcd-prefix=kubernetes.io",
		"--tls-cert-file="+f("apiserver.crt"), "--tls-private-key-file="+f("apiserver.key"),
		"--token-auth-file="+f("tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+f("sa.key"), "--service-account-signing-key-file="+f("sa.key"),
		"--service-cluster-ip-range=172.30.0.0/16", "--cert-dir="+f("certs"), "--profiling=false")
	a.URL = "https://127.0.0.1:" + apiPort
	a.admin = a.Config("admin")
	cs := a.Client("admin")
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	var last error
	if err := basepoll.Every(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		last = apiReady(cs)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("kube-apiserver on %s not ready: %v (logs in %s)", a.URL, last, dir)
	}
	return a
}

// Config is a client configuration of user's token.
func (a *loneAPI) Config(user string) *rest.Config {
	return &rest.Config{Host: a.URL, BearerToken: a.tokens[user], TLSClientConfig: rest.TLSClientConfig{CAData: a.ca.PEM()}}
}

// Client is a clientset of user's token.
func (a *loneAPI) Client(user string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(a.Config(user))
	if err != nil {
		panic(err) // only a malformed configuration fails, and Config makes none
	}
	return cs
}

// Kubeconfig writes a kubeconfig of user's token into dir and returns its path.
func (a *loneAPI) Kubeconfig(t *testing.T, dir, user string) string {
	path := filepath.Join(dir, user+".kubeconfig")
	if err := os.WriteFile(path, kubeconfig(t, a.URL, a.CAFile, a.tokens[user]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serviceAccountKey is a key for kube-apiserver to sign and check ServiceAccount tokens with, in
// PEM.
func serviceAccountKey(t testing.TB) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startProcess starts a process logging to logFile, stopped by its PID when the test ends.
func startProcess(t *testing.T, logFile, binary string, args ...string) {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // it may have exited: Wait says how
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
}
