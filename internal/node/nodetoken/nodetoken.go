// Package nodetoken keeps the node's API credential alive: a bound ServiceAccount token, which
// expires, renewed through the TokenRequest API with the token itself before it does. A legacy
// token Secret's token never expires, so a copy taken from a node stays good for ever; a bound
// one is worth nothing after its lifetime, and the node renews its own.
package nodetoken

import (
	"context"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v4"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
