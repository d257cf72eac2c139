package metricsauth

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCacheAges: a decision answers alone while fresh, only as a fallback until stale, then not.
func TestCacheAges(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	c := newCache(time.Minute, 10*time.Minute, 4)
	c.put(keyOf("t"), entry{decision: Allowed, user: "prometheus", at: now})
	for _, step := range []struct {
		age       time.Duration
		fresh, ok bool
	}{
		{0, true, true},
		{59 * time.Second, true, true},
		{time.Minute, false, true},
		{10*time.Minute - time.Second, false, true},
		{10 * time.Minute, false, false},
	} {
		e, fresh, ok := c.get(keyOf("t"), now.Add(step.age))
		if fresh != step.fresh || ok != step.ok || (ok && e.user != "prometheus") {
			t.Errorf("after %v: %+v fresh %v ok %v, want fresh %v ok %v", step.age, e, fresh, ok, step.fresh, step.ok)
		}
	}
	if _, _, ok := c.get(keyOf("other"), now); ok {
		t.Error("a token never reviewed has a decision")
	}
}

// TestCacheKeepsNoToken: the cache is keyed by the token's hash.
func TestCacheKeepsNoToken(t *testing.T) {
	c := newCache(time.Minute, time.Minute, 4)
	c.put(keyOf("secret-token"), entry{decision: Allowed})
	for k := range c.entries {
		if strings.Contains(string(k[:]), "secret-token") {
			t.Fatalf("the cache holds the token: %q", k)
		}
	}
}

// TestCacheEviction: a full cache gives up the expired first, then the oldest denial, and an
// allowance only when it holds nothing else; never more than its size.
func TestCacheEviction(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		name   string
		before map[string]entry
		put    string
		gone   []string
	}{
		{"the expired first", map[string]entry{
			"old-allowed": {decision: Allowed, at: now.Add(-10 * time.Minute)},
			"denied":      {decision: Forbidden, at: at(1)},
			"allowed":     {decision: Allowed, at: at(2)},
		}, "new", []string{"old-allowed"}},
		{"the oldest denial before any allowance", map[string]entry{
			"allowed":       {decision: Allowed, at: at(0)},
			"unauth-older":  {decision: Unauthenticated, at: at(1)},
			"forbidden-new": {decision: Forbidden, at: at(2)},
		}, "new", []string{"unauth-older"}},
		{"the oldest allowance when all are", map[string]entry{
			"a0": {decision: Allowed, at: at(0)},
			"a1": {decision: Allowed, at: at(1)},
			"a2": {decision: Allowed, at: at(2)},
		}, "new", []string{"a0"}},
		{"a decision renewed takes no room", map[string]entry{
			"a0": {decision: Allowed, at: at(0)},
			"d1": {decision: Forbidden, at: at(1)},
			"a2": {decision: Allowed, at: at(2)},
		}, "d1", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := newCache(time.Minute, 10*time.Minute, 3)
			for k, e := range c.before {
				cache.entries[keyOf(k)] = e
			}
			cache.put(keyOf(c.put), entry{decision: Forbidden, at: at(3)})
			if len(cache.entries) > 3 {
				t.Fatalf("%d decisions in a cache of 3", len(cache.entries))
			}
			for k := range c.before {
				_, kept := cache.entries[keyOf(k)]
				gone := false
				for _, g := range c.gone {
					gone = gone || g == k
				}
				if kept == gone {
					t.Errorf("%s: kept %v, want gone %v", k, kept, gone)
				}
			}
		})
	}
}

// TestCacheFlood: a thousand made-up tokens do not push out an allowed caller.
func TestCacheFlood(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	c := newCache(time.Minute, 10*time.Minute, cacheSize)
	c.put(keyOf("prometheus"), entry{decision: Allowed, at: now})
	for i := range 1000 {
		c.put(keyOf(fmt.Sprint("bogus-", i)), entry{decision: Unauthenticated, at: now.Add(time.Duration(i) * time.Millisecond)})
	}
	if _, _, ok := c.get(keyOf("prometheus"), now.Add(time.Second)); !ok || len(c.entries) != cacheSize {
		t.Fatalf("after a flood: prometheus kept %v, %d decisions", ok, len(c.entries))
	}
}
