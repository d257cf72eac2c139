package metricsauth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI is a stand-in for TokenReview and SubjectAccessReview: users by token, the allowed
// among them, and an outage switch.
type fakeAPI struct {
	users   map[string]string
	allowed map[string]bool
	down    atomic.Bool
	reviews atomic.Int32
}

var errDown = errors.New("TokenReview: dial tcp 127.0.0.1:6443: connect: connection refused")

func (f *fakeAPI) review(_ context.Context, token string) (Decision, string, error) {
	f.reviews.Add(1)
	if f.down.Load() {
		return Unauthenticated, "", errDown
	}
	user, ok := f.users[token]
	switch {
	case !ok:
		return Unauthenticated, "", nil
	case !f.allowed[user]:
		return Forbidden, user, nil
	}
	return Allowed, user, nil
}

func newFake() *fakeAPI {
	return &fakeAPI{users: map[string]string{"prom-token": "prometheus", "someone-token": "someone"}, allowed: map[string]bool{"prometheus": true}}
}

// TestDecideOutage: a fresh decision costs no review; once it is older, the API is asked again,
// and while it does not answer the decision stands until stale, then the caller is refused. The
// outage is logged once, and so is its end.
func TestDecideOutage(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	api := newFake()
	var log bytes.Buffer
	a := &Authorizer{Review: api.review, Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(&log, nil))}
	decide := func(token string) (Decision, error) {
		d, _, err := a.Decide(context.Background(), token)
		return d, err
	}
	for _, step := range []struct {
		name    string
		after   time.Duration
		down    bool
		want    Decision
		err     bool
		reviews int32
	}{
		{"first scrape: reviewed", 0, false, Allowed, false, 1},
		{"30 s later: cached", 30 * time.Second, false, Allowed, false, 1},
		{"a minute after the review: reviewed again", 30 * time.Second, false, Allowed, false, 2},
		{"API down, decision fresh: cached", 30 * time.Second, true, Allowed, false, 2},
		{"API down, decision a minute old: the stale one stands", 30 * time.Second, true, Allowed, false, 3},
		{"API down, decision nine minutes old: still", 8 * time.Minute, true, Allowed, false, 4},
		{"API down, decision ten minutes old: refused", time.Minute, true, Unauthenticated, true, 5},
		{"API back: reviewed", time.Second, false, Allowed, false, 6},
	} {
		now = now.Add(step.after)
		api.down.Store(step.down)
		d, err := decide("prom-token")
		if d != step.want || (err != nil) != step.err || api.reviews.Load() != step.reviews {
			t.Fatalf("%s: %v %v after %d reviews, want %v (error %v) after %d", step.name, d, err, api.reviews.Load(), step.want, step.err, step.reviews)
		}
	}
	if n := strings.Count(log.String(), "does not answer"); n != 1 {
		t.Errorf("the outage logged %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "answers the metrics endpoint's reviews again") {
		t.Errorf("the API's return is not logged:\n%s", log.String())
	}
}

// TestDecideCachesDenials: a forbidden user and an unknown token are not reviewed at every scrape.
func TestDecideCachesDenials(t *testing.T) {
	api := newFake()
	a := &Authorizer{Review: api.review, Log: slog.New(slog.DiscardHandler)}
	for range 3 {
		if d, user, _ := a.Decide(context.Background(), "someone-token"); d != Forbidden || user != "someone" {
			t.Fatalf("someone: %v %s", d, user)
		}
		if d, _, _ := a.Decide(context.Background(), "bogus"); d != Unauthenticated {
			t.Fatalf("bogus: %v", d)
		}
	}
	if api.reviews.Load() != 2 {
		t.Fatalf("%d reviews for two tokens scraped three times each, want 2", api.reviews.Load())
	}
}

// TestDecideShared: scrapes with one token at once share one review.
func TestDecideShared(t *testing.T) {
	api := newFake()
	release := make(chan struct{})
	a := &Authorizer{Log: slog.New(slog.DiscardHandler), Review: func(ctx context.Context, token string) (Decision, string, error) {
		<-release
		return api.review(ctx, token)
	}}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if d, _, err := a.Decide(context.Background(), "prom-token"); d != Allowed || err != nil {
				t.Errorf("%v %v", d, err)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the scrapes reach the review
	close(release)
	wg.Wait()
	if n := api.reviews.Load(); n != 1 {
		t.Fatalf("50 scrapes at once: %d reviews, want 1", n)
	}
}

// TestHandler: each answer's status, and no token in the log.
func TestHandler(t *testing.T) {
	api := newFake()
	var log bytes.Buffer
	a := &Authorizer{Review: api.review, Log: slog.New(slog.NewTextHandler(&log, nil))}
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("tnf_up 1\n")) }))
	for _, c := range []struct {
		name, header string
		down         bool
		want         int
	}{
		{"no header", "", false, http.StatusUnauthorized},
		{"another scheme", "Basic cHJvbS10b2tlbg==", false, http.StatusUnauthorized},
		{"an empty token", "Bearer ", false, http.StatusUnauthorized},
		{"a token the API rejects", "Bearer bogus", false, http.StatusUnauthorized},
		{"a user without the permission", "Bearer someone-token", false, http.StatusForbidden},
		{"a user with it", "Bearer prom-token", false, http.StatusOK},
		{"the scheme in lower case", "bearer prom-token", false, http.StatusOK},
		{"the API down, the decision cached", "Bearer prom-token", true, http.StatusOK},
		{"the API down, a token never seen", "Bearer other-token", true, http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			api.down.Store(c.down)
			r := httptest.NewRequest("GET", "/metrics", nil)
			if c.header != "" {
				r.Header.Set("Authorization", c.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, c.want)
			}
			if (w.Code == http.StatusOK) != strings.Contains(w.Body.String(), "tnf_up") {
				t.Fatalf("%d with body %q", w.Code, w.Body)
			}
			if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("a 401 without WWW-Authenticate")
			}
		})
	}
	for _, token := range []string{"prom-token", "someone-token", "bogus", "other-token"} {
		if strings.Contains(log.String(), token) {
			t.Fatalf("the log holds the token %s:\n%s", token, log.String())
		}
	}
	if !strings.Contains(log.String(), "user=someone") {
		t.Errorf("the denied user is not logged:\n%s", log.String())
	}
}
