// Package limit bounds what one caller of a network endpoint can hold: connections per source
// address at accept, requests in flight once a caller is let through, and the log lines its
// failures write. netutil.LimitListener bounds all callers together, so a few idle connections
// from anyone lock out everyone; nothing in x/net or net/http counts by source.
package limit

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// PerSource wraps ln: a source address (its IP, whatever its port) with max connections open has
// its next one closed at accept, so it never waits in the kernel's backlog ahead of others.
func PerSource(ln net.Listener, max int) net.Listener {
	return &perSource{Listener: ln, max: max, open: map[string]int{}}
}

type perSource struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

func (l *perSource) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		l.mu.Lock()
		full := l.open[src] >= l.max
		if !full {
			l.open[src]++
		}
		l.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		return &counted{Conn: c, release: func() { l.release(src) }}, nil
	}
}

func (l *perSource) release(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[src]--; l.open[src] <= 0 {
		delete(l.open, src)
	}
}

// sourceOf is an address's IP; the whole address where it has none.
func sourceOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return a.String()
}

// counted gives its slot back once, at its first Close.
type counted struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *counted) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// InFlight serves at most max requests through h at once; one more is answered 429 at once
// rather than queued behind the others.
func InFlight(max int, h http.Handler) http.Handler {
	slots := make(chan struct{}, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("%d requests in flight already", max), http.StatusTooManyRequests)
		}
	})
}

// LogWriter passes at most one write per Interval to W (a write is one log line of a
// log.Logger) and counts the others, which the next line passed says: a caller who fails on
// purpose, thousands of times a second, cannot fill the journal. (x/time/rate's Sometimes does
// the first half with a clock no test can move.)
type LogWriter struct {
	W        io.Writer
	Interval time.Duration
	Now      func() time.Time // default time.Now

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (l *LogWriter) Write(p []byte) (int, error) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := now()
	if !l.last.IsZero() && t.Sub(l.last) < l.Interval {
		l.suppressed++
		return len(p), nil
	}
	l.last = t
	if l.suppressed > 0 {
		if _, err := fmt.Fprintf(l.W, "(%d lines not logged since the last one)\n", l.suppressed); err != nil {
			return 0, err
		}
		l.suppressed = 0
	}
	return l.W.Write(p)
}
