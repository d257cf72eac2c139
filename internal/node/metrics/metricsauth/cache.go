// Package metricsauth is how the node's metrics endpoint is served the way OpenShift serves a
// node exporter through kube-rbac-proxy: over TLS with the service-ca operator's certificate
// (Certificate, read again when the files change), and to callers the API vouches for: each
// bearer token goes through a TokenReview, its user through a SubjectAccessReview of get on the
// non-resource path /metrics (Authorizer). Which of that a node can do depends on the files it
// has (Choose).
package metricsauth

import (
	"crypto/sha256"
	"time"
)

// Decision is what the API said of a caller.
type Decision int

const (
	// Unauthenticated: no token, or one the API does not accept (401).
	Unauthenticated Decision = iota
	// Forbidden: a user the API knows, without get on /metrics (403).
	Forbidden
	// Allowed: a user with get on /metrics.
	Allowed
)

func (d Decision) String() string {
	return [...]string{"unauthenticated", "forbidden", "allowed"}[d]
}

// tokenKey is a token's SHA-256: the cache keeps no token, so a memory dump or a debugger shows
// none.
type tokenKey [sha256.Size]byte

func keyOf(token string) tokenKey { return sha256.Sum256([]byte(token)) }

// entry is one decision and when the API gave it.
type entry struct {
	decision Decision
	user     string // empty when Unauthenticated
	at       time.Time
}

// cache holds the API's decisions by token. A decision younger than fresh answers without the
// API; an older one is asked again, and answers only while the API cannot be reached, up to
// stale. The cache holds at most size decisions: a full cache gives up the expired first, then
// the oldest of those that let nobody in, and the oldest allowed last, so that a flood of
// made-up tokens cannot push Prometheus's own out.
type cache struct {
	fresh, stale time.Duration
	size         int
	entries      map[tokenKey]entry
}

func newCache(fresh, stale time.Duration, size int) *cache {
	return &cache{fresh: fresh, stale: stale, size: size, entries: map[tokenKey]entry{}}
}

// get returns the decision for key and whether it is fresh; ok is false when there is none
// younger than stale.
func (c *cache) get(key tokenKey, now time.Time) (e entry, fresh, ok bool) {
	e, ok = c.entries[key]
	if !ok || now.Sub(e.at) >= c.stale {
		return entry{}, false, false
	}
	return e, now.Sub(e.at) < c.fresh, true
}

// put records a decision, making room first when the cache is full.
func (c *cache) put(key tokenKey, e entry) {
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		c.evict(e.at)
	}
	c.entries[key] = e
}

// evict drops every expired decision, or else the one to give up first.
func (c *cache) evict(now time.Time) {
	var victim tokenKey
	found := false
	for k, e := range c.entries {
		if now.Sub(e.at) >= c.stale {
			delete(c.entries, k)
			continue
		}
		if !found || before(e, c.entries[victim]) {
			victim, found = k, true
		}
	}
	if len(c.entries) >= c.size && found {
		delete(c.entries, victim)
	}
}

// before: a goes before b, a denial before an allowance, the older first.
func before(a, b entry) bool {
	if (a.decision == Allowed) != (b.decision == Allowed) {
		return b.decision == Allowed
	}
	return a.at.Before(b.at)
}
