//go:build integration

package cluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	basepoll "github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testca"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// TestMetricsEndpointAuth: tnfctl metrics as tnf-metrics.service runs it, with the serving
// certificate and the node's kubeconfig, in front of a real kube-apiserver: it serves over TLS
// only, to the callers the API vouches for, as OpenShift's platform Prometheus scrapes it. The
// node's identity is bound to system:auth-delegator (as the layer's RBAC binds its
// ServiceAccount), prometheus to get on /metrics (as OpenShift's prometheus-k8s ClusterRole
// grants it), someone to nothing. Without Pacemaker: the endpoint serves what it reads anyway
// (tnf_up says which source answered). Then an endpoint started before its files exist, as on a
// node booted before its kubeconfig was copied: plain HTTP on loopback only, TLS on every address
// once the files come.
func TestMetricsEndpointAuth(t *testing.T) {
	t.Parallel()
	api := startLoneAPI(t, "prometheus", "someone", "node")
	admin := api.Client("admin")
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	// A bootstrap ClusterRole of every kube-apiserver: create TokenReviews and SubjectAccessReviews.
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, "system:auth-delegator", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tnf-test-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := func(user, role string) {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + strings.ReplaceAll(role, ":", "-")},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("prometheus", reader.Name)

	ca, err := testca.New("openshift-service-serving-signer")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM())
	dir := t.TempDir()
	files := endpointFiles{cert: filepath.Join(dir, "metrics-tls.crt"), key: filepath.Join(dir, "metrics-tls.key"), kubeconfig: api.Kubeconfig(t, dir, "node")}
	first := files.issue(t, ca)
	addr := "127.0.0.1:" + freePort(t)
	startMetrics(t, dir, addr, files)
	e := endpoint{t: t, pool: pool}
	e.waitServing("https://" + addr)

	// The node may not review yet: the endpoint cannot say who the caller is, and refuses.
	if code, body := e.get("https://"+addr, api.Token("prometheus")); code != http.StatusServiceUnavailable {
		t.Fatalf("prometheus, the node's reviews forbidden: %d %s, want 503", code, body)
	}
	bind("node", "system:auth-delegator")
	e.waitStatus("https://"+addr, api.Token("prometheus"), http.StatusOK)
	code, body := e.get("https://"+addr, api.Token("prometheus"))
	if code != http.StatusOK || !strings.Contains(body, `tnf_up{node="node1",source="pacemaker"} 0`) || !strings.Contains(body, "tnf_layer_info") {
		t.Fatalf("prometheus: %d, want 200 with the tnf_ metrics:\n%s", code, body)
	}
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"someone, without get on /metrics", api.Token("someone"), http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized},
		{"a token the API does not know", "bogus-" + randomText(16), http.StatusUnauthorized},
		{"the node's own token: it may review, not read", api.Token("node"), http.StatusForbidden},
	} {
		if code, body := e.get("https://"+addr, c.token); code != c.want || strings.Contains(body, "tnf_") {
			t.Errorf("%s: %d %s, want %d", c.who, code, body, c.want)
		}
	}
	e.refusesPlain(addr)

	// The service-ca operator renews the certificate, the node's copy follows: the next scrape
	// is served the new one, by the same process.
	renewed := files.issue(t, ca)
	if renewed.Equal(first) {
		t.Fatal("the renewed certificate is the first")
	}
	e.waitCertificate("https://"+addr, renewed)
	if code, _ := e.get("https://"+addr, api.Token("prometheus")); code != http.StatusOK {
		t.Fatalf("prometheus after the renewal: %d", code)
	}

	e.withstandsIdleCallers(addr, filepath.Join(dir, "metrics-"+strings.TrimPrefix(addr, "127.0.0.1:")+".log"), api.Token("prometheus"))

	// A node booted before its kubeconfig and certificate were copied.
	early := t.TempDir()
	port := freePort(t)
	later := endpointFiles{cert: filepath.Join(early, "metrics-tls.crt"), key: filepath.Join(early, "metrics-tls.key"), kubeconfig: filepath.Join(early, "node.kubeconfig")}
	startMetrics(t, early, ":"+port, later)
	loopback := "127.0.0.1:" + port
	e.waitServing("http://" + loopback)
	if code, body := e.get("http://"+loopback, ""); code != http.StatusOK || !strings.Contains(body, "tnf_up") {
		t.Fatalf("on loopback before the files: %d, want 200 with the metrics:\n%s", code, body)
	}
	other := nonLoopbackIPv4()
	if other != "" {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(other, port), 2*time.Second); err == nil {
			conn.Close()
			t.Fatalf("before the files, %s:%s answers: plain HTTP reaches the network", other, port)
		}
	} else {
		t.Log("no address but loopback on this machine: the other addresses are not checked")
	}
	later.issue(t, ca)
	kc, err := os.ReadFile(files.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(later.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitStatus("https://"+loopback, api.Token("prometheus"), http.StatusOK)
	e.refusesPlain(loopback)
	if code, _ := e.get("https://"+loopback, ""); code != http.StatusUnauthorized {
		t.Fatalf("without a token once secured: %d, want 401", code)
	}
	if other != "" {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(other, port), 2*time.Second)
		if err != nil {
			t.Fatalf("once secured, on every address: %v", err)
		}
		conn.Close()
	}
}

// withstandsIdleCallers: with 100 idle connections and 100 that began a TLS handshake and
// stalled, all from another address (127.0.0.2), prometheus's scrape from 127.0.0.1 is answered;
// the stalled connections the endpoint took are closed by it (its handshake deadline), and
// their failed handshakes write a line or two to its log, not one each.
func (e endpoint) withstandsIdleCallers(addr, logFile, token string) {
	e.t.Helper()
	logged := func() int {
		data, err := os.ReadFile(logFile)
		if err != nil {
			e.t.Fatal(err)
		}
		return strings.Count(string(data), "TLS handshake error")
	}
	before := logged()
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range 200 {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			e.t.Fatalf("connection %d from 127.0.0.2: %v", i, err)
		}
		held = append(held, c)
		if i%2 == 1 {
			// A TLS record header announcing a 512-byte ClientHello, and one byte of it.
			if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil && !isClosed(err) {
				e.t.Fatal(err)
			}
		}
	}
	if code, body := e.get("https://"+addr, token); code != http.StatusOK || !strings.Contains(body, "tnf_up") {
		e.t.Fatalf("prometheus with 200 idle connections from 127.0.0.2 open: %d %s", code, body)
	}
	// Each connection ends: at once if the endpoint refused it, at its deadline (3 s) if it took it.
	ended := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil && isClosed(err) {
			ended++
		}
	}
	if ended != len(held) {
		e.t.Errorf("%d of %d stalled connections still open after 10 s", len(held)-ended, len(held))
	}
	// The log's writes are in by now: the endpoint closed each connection after writing its line.
	if n := logged() - before; n > 2 {
		e.t.Errorf("%d handshake errors logged for one burst, want at most 2", n)
	}
}

// isClosed says err is the peer's close or reset, not a timeout.
func isClosed(err error) bool {
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// endpointFiles are where an endpoint under test reads its serving certificate and its
// kubeconfig.
type endpointFiles struct{ cert, key, kubeconfig string }

// issue writes a new serving certificate for 127.0.0.1 as the node's copy of the Secret is
// written, each file renamed into place, and returns it.
func (f endpointFiles) issue(t *testing.T, ca testca.CA) *x509.Certificate {
	t.Helper()
	cert, key, err := ca.Issue("tnf-metrics", net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{f.key: key, f.cert: cert} {
		if err := os.WriteFile(name+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(name+".new", name); err != nil {
			t.Fatal(err)
		}
	}
	block, _ := pem.Decode(cert)
	parsed, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// startMetrics runs tnfctl metrics on listen with files, as node1, with no node configuration
// (no etcd to ask) and no Pacemaker; its log goes to dir and into the test's when it fails.
func startMetrics(t *testing.T, dir, listen string, f endpointFiles) {
	t.Helper()
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "metrics-"+port+".log")
	testproc.Start(t, logFile, testbin.Path(t, "tnfctl"), "metrics", "--node", "node1", "--config", filepath.Join(dir, "cluster.yaml"),
		"--listen", listen, "--tls-cert-file", f.cert, "--tls-key-file", f.key, "--kubeconfig", f.kubeconfig)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("tnfctl metrics on %s:\n%s", listen, log)
		}
	})
}

// endpoint is a scraper of the endpoints under test: a fresh connection for every request,
// trusting the test's service CA.
type endpoint struct {
	t    *testing.T
	pool *x509.CertPool
}

func (e endpoint) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: e.pool}}}
}

// do GETs base/metrics with token as a bearer token (none when empty).
func (e endpoint) do(base, token string) (*http.Response, string, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client().Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

func (e endpoint) get(base, token string) (int, string) {
	e.t.Helper()
	resp, body, err := e.do(base, token)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, body
}

// waitServing waits until base answers at all.
func (e endpoint) waitServing(base string) {
	e.t.Helper()
	e.poll("an answer from "+base, func() (bool, string) {
		_, _, err := e.do(base, "")
		return err == nil, fmt.Sprint(err)
	})
}

// waitStatus waits until base answers token with want.
func (e endpoint) waitStatus(base, token string, want int) {
	e.t.Helper()
	e.poll(fmt.Sprintf("%d from %s", want, base), func() (bool, string) {
		resp, body, err := e.do(base, token)
		if err != nil {
			return false, err.Error()
		}
		return resp.StatusCode == want, resp.Status + " " + body
	})
}

// waitCertificate waits until base's handshake presents want.
func (e endpoint) waitCertificate(base string, want *x509.Certificate) {
	e.t.Helper()
	e.poll("the certificate of serial "+want.SerialNumber.String()+" from "+base, func() (bool, string) {
		resp, _, err := e.do(base, "")
		if err != nil {
			return false, err.Error()
		}
		got := resp.TLS.PeerCertificates[0]
		return got.Equal(want), "serial " + got.SerialNumber.String()
	})
}

// poll checks every 200 ms for at most 30 s.
func (e endpoint) poll(what string, check func() (bool, string)) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last string
	if err := basepoll.Every(ctx, 200*time.Millisecond, func(context.Context) (bool, error) {
		ok, why := check()
		last = why
		return ok, nil
	}); err != nil {
		e.t.Fatalf("%s: %v (last: %s)", what, err, last)
	}
}

// refusesPlain: plain HTTP to addr gets no metrics.
func (e endpoint) refusesPlain(addr string) {
	e.t.Helper()
	resp, body, err := e.do("http://"+addr, "")
	if err == nil && (resp.StatusCode == http.StatusOK || strings.Contains(body, "tnf_")) {
		e.t.Fatalf("plain HTTP to %s: %s\n%s", addr, resp.Status, body)
	}
}

// nonLoopbackIPv4 is an IPv4 address of this machine other than loopback, or "" when it has none.
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}
