// Package nodetoken keeps the node's API credential alive: a bound ServiceAccount token, which
// expires, renewed through the TokenRequest API with the token itself before it does. A legacy
// token Secret's token never expires, so a copy taken from a node stays good for ever; a bound
// one is worth nothing after its lifetime, and the node renews its own.
package nodetoken

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v4"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
)

// Token is what the kubeconfig's token says of itself.
type Token struct {
	// Bound: the token expires (a TokenRequest's); false for a legacy token Secret's, or one
	// that is no ServiceAccount's JWT.
	Bound              bool
	Issued, Expires    time.Time
	Namespace, Account string
}

// claims are the fields of a ServiceAccount token this package reads.
type claims struct {
	jwt.RegisteredClaims
	Kubernetes struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// Renewal is one look at the credential.
type Renewal struct {
	Before, After Token // After is Before when nothing was renewed
	Renewed       bool
}

// Renew reads the kubeconfig at path and, when its token is bound and half of its lifetime has
// passed at now, asks the API for a new one of the same lifetime for the same ServiceAccount,
// with the token itself, and writes the kubeconfig again with it (a new file renamed into place,
// 0600). The token's claims are read without checking its signature: the API checks it when the
// token is used, and nothing is granted here on what they say.
func Renew(ctx context.Context, path string, now time.Time) (Renewal, error) {
	unlock, err := lock(path)
	if err != nil {
		return Renewal{}, err
	}
	defer unlock()
	cfg, user, err := load(path)
	if err != nil {
		return Renewal{}, err
	}
	before := parse(user.Token)
	r := Renewal{Before: before, After: before}
	lifetime := before.Expires.Sub(before.Issued)
	if !before.Bound || now.Before(before.Issued.Add(lifetime/2)) {
		return r, nil
	}
	rest, err := kubeconfig.Load(path, "tnf-keys-sync", 0)
	if err != nil {
		return r, err
	}
	cs, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return r, err
	}
	seconds := int64(lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(before.Namespace).CreateToken(ctx, before.Account,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return r, fmt.Errorf("a new token for serviceaccount %s/%s: %w", before.Namespace, before.Account, err)
	}
	user.Token = tr.Status.Token
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return r, err
	}
	if err := fsutil.WriteFileAtomic(path, data, 0o600); err != nil {
		return r, err
	}
	r.After, r.Renewed = parse(tr.Status.Token), true
	return r, nil
}

// Read is what the token of the kubeconfig at path says of itself.
func Read(path string) (Token, error) {
	_, user, err := load(path)
	if err != nil {
		return Token{}, err
	}
	return parse(user.Token), nil
}

// load reads the kubeconfig at path and the user its current context names.
func load(path string) (*clientcmdapi.Config, *clientcmdapi.AuthInfo, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: current-context %q names no user", path, cfg.CurrentContext)
	}
	return cfg, cfg.AuthInfos[kctx.AuthInfo], nil
}

// parse reads a token's claims; a token that is no JWT of a ServiceAccount with an expiry reads
// as not bound.
func parse(token string) Token {
	var c claims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil || c.ExpiresAt == nil || c.IssuedAt == nil ||
		c.Kubernetes.Namespace == "" || c.Kubernetes.ServiceAccount.Name == "" {
		return Token{}
	}
	return Token{Bound: true, Issued: c.IssuedAt.Time, Expires: c.ExpiresAt.Time,
		Namespace: c.Kubernetes.Namespace, Account: c.Kubernetes.ServiceAccount.Name}
}

// KubeletKubeconfig is the kubeconfig the Machine Config Operator writes on every node for the
// kubelet's bootstrap: its server is the cluster's internal API URL (api-int, the
// Infrastructure's apiServerInternalURL) and its CA bundle the one MCO keeps current there
// (machine-config-operator pkg/server, pkg/daemon/certificate_writer.go).
const KubeletKubeconfig = "/etc/kubernetes/kubeconfig"

// Account is a ServiceAccount, by namespace and name.
type Account struct{ Namespace, Name string }

// Username is the account's user name in the API.
func (a Account) Username() string { return "system:serviceaccount:" + a.Namespace + ":" + a.Name }

// Install is a kubeconfig to write for a token an administrator made (oc create token).
type Install struct {
	Path  string  // where it goes
	Token string  // the token, as oc create token prints it
	For   Account // whose it must be
	// Server and CAData are the API's URL and CA bundle; each empty one is taken from the
	// current context of the kubeconfig at Kubelet (KubeletKubeconfig on a node).
	Server  string
	CAData  []byte
	Kubelet string
	// Check asks the API who the token is (a SelfSubjectReview) before anything is written.
	Check bool
}

// Write writes the kubeconfig (0600, its folder made 0700 when missing, a new file renamed into
// place) once the token is proven to be i.For's and alive: by its claims when it is a bound
// token, and by the API when i.Check. It returns what the token says of itself. Its errors
// never hold the token.
func (i Install) Write(ctx context.Context, now time.Time) (Token, error) {
	token := strings.TrimSpace(i.Token)
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return Token{}, errors.New("the token: one line expected, as oc create token prints it")
	}
	tok := parse(token)
	switch {
	case tok.Bound && (Account{tok.Namespace, tok.Account}) != i.For:
		return tok, fmt.Errorf("the token is serviceaccount %s/%s's, not %s/%s's: each node takes its own", tok.Namespace, tok.Account, i.For.Namespace, i.For.Name)
	case tok.Bound && !now.Before(tok.Expires):
		return tok, fmt.Errorf("the token expired at %s", tok.Expires.UTC().Format(time.RFC3339))
	}
	if i.Server == "" || len(i.CAData) == 0 {
		server, ca, err := apiOf(i.Kubelet)
		if err != nil {
			return tok, err
		}
		if i.Server == "" {
			i.Server = server
		}
		if len(i.CAData) == 0 {
			i.CAData = ca
		}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(i.CAData) {
		return tok, errors.New("the API's CA bundle holds no PEM certificate")
	}
	if i.Check {
		if err := checkIdentity(ctx, i.Server, i.CAData, token, i.For); err != nil {
			return tok, err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["api"] = &clientcmdapi.Cluster{Server: i.Server, CertificateAuthorityData: i.CAData}
	cfg.AuthInfos[i.For.Name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "api", AuthInfo: i.For.Name}
	cfg.CurrentContext = "default"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return tok, err
	}
	if err := os.MkdirAll(filepath.Dir(i.Path), 0o700); err != nil {
		return tok, err
	}
	unlock, err := lock(i.Path)
	if err != nil {
		return tok, err
	}
	defer unlock()
	if err := fsutil.WriteFileAtomic(i.Path, data, 0o600); err != nil {
		return tok, fmt.Errorf("%s: %w", i.Path, err)
	}
	return tok, nil
}

// lock holds an exclusive lock beside the kubeconfig at path until the returned func runs: its
// writers (Install, FollowCA, Renew from tnf-keys-sync.timer) each read it whole and write it
// back, and would otherwise put back the token an administrator just replaced.
func lock(path string) (func(), error) {
	lockFile := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
	unlock, err := fsutil.Lock(context.Background(), lockFile)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", lockFile, err)
	}
	return unlock, nil
}

// apiOf is the server and CA bundle of the kubeconfig at path's current context.
func apiOf(path string) (string, []byte, error) {
	const hint = " (give --server and --certificate-authority)"
	cfg, err := clientcmd.LoadFromFile(path)
	if err == nil {
		err = clientcmd.ResolveLocalPaths(cfg) // a relative CA file is the kubeconfig's folder's, as for kubectl
	}
	if err != nil {
		return "", nil, fmt.Errorf("the API's address and CA: kubeconfig %s: %w"+hint, path, err)
	}
	c, err := currentCluster(cfg, path)
	if err != nil {
		return "", nil, err
	}
	ca := c.CertificateAuthorityData
	if len(ca) == 0 && c.CertificateAuthority != "" {
		if ca, err = os.ReadFile(c.CertificateAuthority); err != nil {
			return "", nil, fmt.Errorf("kubeconfig %s: its CA: %w"+hint, path, err)
		}
	}
	if c.Server == "" || len(ca) == 0 {
		return "", nil, fmt.Errorf("kubeconfig %s: current-context %q: no server or no CA"+hint, path, cfg.CurrentContext)
	}
	return c.Server, ca, nil
}

// currentCluster is the cluster the current context of cfg (read from path) names.
func currentCluster(cfg *clientcmdapi.Config, path string) (*clientcmdapi.Cluster, error) {
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.Clusters[kctx.Cluster] == nil {
		return nil, fmt.Errorf("kubeconfig %s: current-context %q names no cluster", path, cfg.CurrentContext)
	}
	return cfg.Clusters[kctx.Cluster], nil
}

// checkIdentity asks the API at server who token is, and refuses any other answer than want.
func checkIdentity(ctx context.Context, server string, ca []byte, token string, want Account) error {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		Timeout: kubeconfig.DefaultTimeout, UserAgent: "tnfctl"})
	if err != nil {
		return err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("asking %s who the token is: %w (--skip-check writes it unchecked)", server, err)
	}
	if got := r.Status.UserInfo.Username; got != want.Username() {
		return fmt.Errorf("%s says the token is %s's, not %s's", server, got, want.Username())
	}
	return nil
}

// FollowCA gives the kubeconfig at path the CA bundle of the kubelet's kubeconfig (from) when
// both name the same server and the bundles differ: MCO rewrites the kubelet's when the API's
// signers rotate, and a copy taken at install would then stop trusting the API. A kubeconfig
// naming its CA by file, or another server, is left as it is, as is everything where from is
// missing. It says whether it wrote.
func FollowCA(path, from string) (bool, error) {
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	server, ca, err := apiOf(from)
	if err != nil {
		return false, err
	}
	// A kubeconfig others may read is reported by its users, not mended here behind their back.
	if err := kubeconfig.CheckPrivate(path); err != nil {
		return false, err
	}
	unlock, err := lock(path)
	if err != nil {
		return false, err
	}
	defer unlock()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return false, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	c, err := currentCluster(cfg, path)
	if err != nil {
		return false, err
	}
	if c.Server != server || len(c.CertificateAuthorityData) == 0 || bytes.Equal(c.CertificateAuthorityData, ca) {
		return false, nil
	}
	c.CertificateAuthorityData = ca
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return false, err
	}
	return true, fsutil.WriteFileAtomic(path, data, 0o600)
}
