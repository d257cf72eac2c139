package metricsauth

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
)

// Path and Verb are what a caller must be allowed: OpenShift's prometheus-k8s ClusterRole grants
// get on the non-resource URL /metrics, as kube-rbac-proxy asks it in front of node-exporter.
const (
	Path = "/metrics"
	Verb = "get"
)

// reviewTimeout bounds each review: Prometheus's scrape timeout is 10 s.
const reviewTimeout = 5 * time.Second

// APIReviewer asks the API who a token is (TokenReview) and whether that user may get /metrics
// (SubjectAccessReview), with the node's kubeconfig, whose identity the API lets create both
// (the ClusterRole system:auth-delegator).
type APIReviewer struct {
	// Kubeconfig is read again when the file changes: an administrator replaces it to rotate its
	// token, without restarting the service.
	Kubeconfig string

	mu     sync.Mutex
	read   os.FileInfo // the kubeconfig the clients were made from
	authn  authenticationclient.AuthenticationV1Interface
	authzn authorizationclient.AuthorizationV1Interface
}

// Check reads the kubeconfig, so that a malformed one is an error at start.
func (r *APIReviewer) Check() error {
	_, _, err := r.clients()
	return err
}

// Review is an Authorizer's Review: the decision, the user's name, or the error that kept the
// API from answering. The token is never in the error.
func (r *APIReviewer) Review(ctx context.Context, token string) (Decision, string, error) {
	authn, authzn, err := r.clients()
	if err != nil {
		return Unauthenticated, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	tr, err := authn.TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return Unauthenticated, "", fmt.Errorf("TokenReview: %w", err)
	}
	if !tr.Status.Authenticated {
		return Unauthenticated, "", nil
	}
	u := tr.Status.User
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := authzn.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: Path, Verb: Verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return Unauthenticated, u.Username, fmt.Errorf("SubjectAccessReview of user %s: %w", u.Username, err)
	}
	if !sar.Status.Allowed {
		return Forbidden, u.Username, nil
	}
	return Allowed, u.Username, nil
}

// clients are the two API groups' typed clients, made again when the kubeconfig changed.
func (r *APIReviewer) clients() (authenticationclient.AuthenticationV1Interface, authorizationclient.AuthorizationV1Interface, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fi, err := os.Stat(r.Kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", r.Kubeconfig, err)
	}
	if r.read != nil && sameFile(fi, r.read) {
		return r.authn, r.authzn, nil
	}
	cfg, err := kubeconfig.Load(r.Kubeconfig, "tnf-metrics", reviewTimeout)
	if err != nil {
		return nil, nil, err
	}
	authn, err := authenticationclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", r.Kubeconfig, err)
	}
	authzn, err := authorizationclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", r.Kubeconfig, err)
	}
	r.read, r.authn, r.authzn = fi, authn, authzn
	return authn, authzn, nil
}

// sameFile: the same file, unchanged since (a file replaced by a rename is another).
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}
