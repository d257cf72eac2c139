package metricsauth

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// How long the API's decisions are kept: Prometheus scrapes every 30 s, so a minute spares it
// the API on every other scrape, and a permission granted or taken away shows within a minute.
// While the API cannot be reached (a kube-apiserver restarting, or etcd failing over: what the
// metrics are there to show), the last decision stands for ten minutes, then callers are refused.
const (
	freshFor = time.Minute
	staleFor = 10 * time.Minute
	// cacheSize bounds the decisions kept: the platform's two Prometheus replicas and a few
	// people need a handful.
	cacheSize = 256
)

// Authorizer lets through the callers the API vouches for. It hand-writes what k8s.io/apiserver's
// delegating authenticator and authorizer do (its token and decision caches): those forget a
// decision when it expires, so an API outage longer than their TTL would blind monitoring, and
// they would make k8s.io/apiserver a direct dependency of the node's binary.
type Authorizer struct {
	// Review asks the API about a token: an error means no answer (the API unreachable, the
	// node's own credential refused), never a denial.
	Review func(ctx context.Context, token string) (Decision, string, error)
	Log    *slog.Logger     // default slog.Default
	Now    func() time.Time // default time.Now

	once    sync.Once
	mu      sync.Mutex
	cache   *cache
	group   singleflight.Group
	lastErr string // the last review error logged, so that an outage is logged once
}

// Decide says what the API says of token, from the cache while the decision is fresh, or while
// the API cannot be reached and it is not stale. Concurrent scrapes with one token share one
// review.
func (a *Authorizer) Decide(ctx context.Context, token string) (Decision, string, error) {
	a.once.Do(func() {
		a.cache = newCache(freshFor, staleFor, cacheSize)
		if a.Log == nil {
			a.Log = slog.Default()
		}
	})
	key := keyOf(token)
	a.mu.Lock()
	cached, fresh, ok := a.cache.get(key, a.now())
	a.mu.Unlock()
	if fresh {
		return cached.decision, cached.user, nil
	}
	v, err, _ := a.group.Do(string(key[:]), func() (any, error) {
		// The review outlives a scrape that gives up: the others waiting on it still want it.
		d, user, err := a.Review(context.WithoutCancel(ctx), token)
		if err != nil {
			return entry{}, err
		}
		if d == Forbidden {
			// Once per freshFor and caller: what an administrator granting the permission needs.
			a.Log.Info("a caller may not get /metrics", "user", user)
		}
		e := entry{decision: d, user: user, at: a.now()}
		a.mu.Lock()
		a.cache.put(key, e)
		a.mu.Unlock()
		return e, nil
	})
	a.logReview(err)
	if err != nil {
		if ok {
			return cached.decision, cached.user, nil
		}
		return Unauthenticated, "", err
	}
	e := v.(entry)
	return e.decision, e.user, nil
}

// logReview logs a review error when it differs from the last one, and the API answering again.
func (a *Authorizer) logReview(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil && err.Error() != a.lastErr:
		a.lastErr = err.Error()
		a.Log.Warn("the API does not answer the metrics endpoint's reviews: callers without a decision of the last "+staleFor.String()+" are refused", "error", err)
	case err == nil && a.lastErr != "":
		a.lastErr = ""
		a.Log.Info("the API answers the metrics endpoint's reviews again")
	}
}

func (a *Authorizer) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

// Handler serves next to the callers the API lets get /metrics: 401 without a token or with one
// the API rejects, 403 for a user without the permission, and 503 when the API cannot be asked
// and no decision is cached. 503 and not 401: the caller's token may be fine, and Prometheus's
// target page then says that the endpoint, not the token, is at fault.
func (a *Authorizer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			unauthorized(w)
			return
		}
		d, user, err := a.Decide(r.Context(), token)
		switch {
		case err != nil:
			http.Error(w, "the API cannot be asked who the caller is", http.StatusServiceUnavailable)
		case d == Unauthenticated:
			unauthorized(w)
		case d == Forbidden:
			http.Error(w, "user "+user+" may not get /metrics", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// bearer is the token of an Authorization: Bearer header (the scheme's case does not matter,
// RFC 7235).
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="tnf-metrics"`)
	http.Error(w, "a bearer token the API accepts is required", http.StatusUnauthorized)
}
