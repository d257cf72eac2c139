// Package kubeapi runs Kubernetes' own kube-apiserver (bin/kube-apiserver, built from
// k8s.io/kubernetes) for the tests, with static tokens as an administrator's `oc create token`
// would give, and makes the API what the cluster-etcd-operator makes it for the handover.
package kubeapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	basepoll "github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/test/testca"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// Etcd is where kube-apiserver keeps its objects: etcd's client URLs and, over TLS, the CA and
// the client certificate kube-apiserver presents (empty for plain HTTP).
type Etcd struct {
	Servers                   []string
	CAFile, CertFile, KeyFile string
}

// Server is a kube-apiserver on loopback.
type Server struct {
	URL    string
	CAFile string
	ca     testca.CA
	tokens map[string]string
}

// readyLimit bounds the wait for a new server's /readyz: under a TCG guest's etcd it is slow.
const readyLimit = 4 * time.Minute

// Start starts kube-apiserver over etcd, with its files and log in dir, and waits until it is
// ready; it is stopped by its PID when the test ends. users get a token each; "admin" is in
// system:masters.
func Start(t testing.TB, binary, dir string, etcd Etcd, users ...string) *Server {
	t.Helper()
	ca, err := testca.New("tnf-test-api-ca")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{CAFile: filepath.Join(dir, "ca.crt"), ca: ca, tokens: map[string]string{"admin": randomToken()}}
	tokens := s.tokens["admin"] + ",admin,admin,system:masters\n"
	for _, u := range users {
		s.tokens[u] = randomToken()
		tokens += s.tokens[u] + "," + u + "," + u + "\n"
	}
	cert, key, err := ca.Issue("kube-apiserver", net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	saKey, err := ServiceAccountKey()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.crt": ca.PEM(), "apiserver.crt": cert, "apiserver.key": key, "tokens.csv": []byte(tokens), "service-account.key": saKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	testproc.Start(t, filepath.Join(dir, "kube-apiserver.log"), binary, Args("127.0.0.1", port, dir, filepath.Join(dir, "certs"), etcd)...)
	s.URL = "https://127.0.0.1:" + port
	cs := s.Client("admin")
	ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
	defer cancel()
	var last error
	if err := basepoll.Every(ctx, 200*time.Millisecond, func(context.Context) (bool, error) {
		last = Ready(cs)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("kube-apiserver on %s not ready: %v (logs in %s)", s.URL, last, dir)
	}
	return s
}

// Args is kube-apiserver's command line (without the program) as the tests run it: on address
// and port, its files in dir (apiserver.crt and .key, tokens.csv, service-account.key), its own
// certificates in certDir, and its objects in etcd.
func Args(address, port, dir, certDir string, etcd Etcd) []string {
	f := func(name string) string { return filepath.Join(dir, name) }
	args := []string{"--advertise-address=" + address, "--bind-address=" + address, "--secure-port=" + port,
		"--etcd-servers=" + strings.Join(etcd.Servers, ","), "--etcd-prefix=kubernetes.io",
		"--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--token-auth-file=" + f("tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + f("service-account.key"), "--service-account-signing-key-file=" + f("service-account.key"),
		"--service-cluster-ip-range=172.30.0.0/16", "--cert-dir=" + certDir, "--profiling=false"}
	if etcd.CAFile != "" {
		args = append(args, "--etcd-cafile="+etcd.CAFile, "--etcd-certfile="+etcd.CertFile, "--etcd-keyfile="+etcd.KeyFile)
	}
	return args
}

// Token is user's token.
func (s *Server) Token(user string) string { return s.tokens[user] }

// CA is the PEM of the CA that signed the server's certificate.
func (s *Server) CA() []byte { return s.ca.PEM() }

// Config is a client configuration of user's token.
func (s *Server) Config(user string) *rest.Config {
	return &rest.Config{Host: s.URL, BearerToken: s.tokens[user], TLSClientConfig: rest.TLSClientConfig{CAData: s.ca.PEM()}}
}

// Client is a clientset of user's token.
func (s *Server) Client(user string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(s.Config(user))
	if err != nil {
		panic(err) // only a malformed configuration fails, and Config makes none
	}
	return cs
}

// Ready is nil once the API server answers its readiness check with "ok".
func Ready(cs *kubernetes.Clientset) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err == nil && string(body) != "ok" {
		err = fmt.Errorf("readyz: %s", body)
	}
	return err
}

// Kubeconfig is a kubeconfig for server with a bearer token, as an administrator makes one for
// a ServiceAccount; the server's CA is the file caFile, or caData itself when caFile is empty.
func Kubeconfig(server, caFile string, caData []byte, token string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["api"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	if caFile == "" {
		kc.Clusters["api"].CertificateAuthorityData = caData
	}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["api"] = &clientcmdapi.Context{Cluster: "api", AuthInfo: "user"}
	kc.CurrentContext = "api"
	return clientcmd.Write(*kc)
}

// ServiceAccountKey is a key for kube-apiserver to sign and check ServiceAccount tokens with, in
// PEM.
func ServiceAccountKey() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
