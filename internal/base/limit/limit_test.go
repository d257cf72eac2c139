package limit

import (
	"bytes"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// dialFrom connects to addr from the loopback address src (every 127/8 address is lo's).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer says whether the server closed c: a read sees EOF (or a reset) rather than
// waiting.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	ne, isNet := err.(net.Error)
	return err != nil && !(isNet && ne.Timeout())
}

// TestPerSource: a source at its limit has its next connection closed at accept, while
// another source is served; a connection closed gives its slot back.
func TestPerSource(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := PerSource(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	addr := inner.Addr().String()
	accept := func(who string) net.Conn {
		t.Helper()
		select {
		case c := <-accepted:
			return c
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not accepted", who)
			return nil
		}
	}
	_ = dialFrom(t, "127.0.0.2", addr)
	first := accept("127.0.0.2's first")
	_ = dialFrom(t, "127.0.0.2", addr)
	accept("127.0.0.2's second")
	if over := dialFrom(t, "127.0.0.2", addr); !closedByServer(over) {
		t.Fatal("127.0.0.2's third connection was not closed")
	}
	_ = dialFrom(t, "127.0.0.3", addr)
	accept("127.0.0.3's first, with 127.0.0.2 at its limit")
	// The server ends one of 127.0.0.2's: it may connect again.
	first.Close()
	_ = dialFrom(t, "127.0.0.2", addr)
	accept("127.0.0.2's, after one of its two closed")
}

// TestInFlight: with max requests being served, one more is answered 429 at once; once one
// ends, the next is served.
func TestInFlight(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	h := InFlight(2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))
	done := make(chan int, 2)
	for range 2 {
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			done <- rec.Code
		}()
		<-started
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a third request: %d %v, want 429 with Retry-After", rec.Code, rec.Header())
	}
	release <- struct{}{}
	if code := <-done; code != http.StatusOK {
		t.Fatalf("a request served: %d", code)
	}
	close(release)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("after one ended: %d, want 200", rec.Code)
	}
	<-done
}

// TestLogWriter: of a burst of lines, the first is logged; the next one logged once the interval
// has passed says how many were not.
func TestLogWriter(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	l := log.New(&LogWriter{W: &out, Interval: 10 * time.Second, Now: func() time.Time { return clock }}, "", 0)
	for i := range 1000 {
		l.Printf("http: TLS handshake error %d", i)
	}
	if got := out.String(); got != "http: TLS handshake error 0\n" {
		t.Fatalf("a burst logged:\n%s", got)
	}
	clock = clock.Add(10 * time.Second)
	l.Print("http: TLS handshake error, later")
	want := "http: TLS handshake error 0\n(999 lines not logged since the last one)\nhttp: TLS handshake error, later\n"
	if got := out.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
