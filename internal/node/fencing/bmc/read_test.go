package bmc_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
)

// TestReadPowerDescribe: what an administrator is told about a BMC, read by a real gofish
// client from the emulator: its PowerState, credentials it rejects, no answer.
func TestReadPowerDescribe(t *testing.T) {
	e := emulator.StartForTest(t, emulator.Config{Systems: []emulator.System{
		{ID: "1", Username: "admin", Password: "right", Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: "Off"}}}}})
	cred := func(endpoint, pw string) bmc.Credential {
		a, err := bmc.ParseAddress("test", "redfish+"+endpoint+"/redfish/v1/Systems/1")
		if err != nil {
			t.Fatal(err)
		}
		return bmc.Credential{Address: a, Username: "admin", Password: pw, InsecureSkipCertificateCheck: true}
	}
	// A listener that accepts and never answers: a BMC that hangs.
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	// A port nobody listens on: a BMC that is down.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for _, tc := range []struct {
		name, endpoint, password, want string
	}{
		{"off", e.URL(), "right", "BMC h says PowerState Off"},
		{"wrong password", e.URL(), "wrong", "BMC h rejects the credentials (HTTP 401)"},
		{"hangs", "https://" + hung.Addr().String(), "right", "BMC h unreachable"},
		{"down", "https://" + closed.Addr().String(), "right", "BMC h unreachable"},
	} {
		r := bmc.ReadPower(context.Background(), cred(tc.endpoint, tc.password), bmc.Options{Timeout: time.Second})
		if got := r.Describe("h"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q (%v), want %q", tc.name, got, r.Err, tc.want)
		}
	}
}

// TestRedirectNotFollowed: a BMC that answers with a redirect is an error, and the client never
// reaches where it points, with a session or with Basic auth: the redirect would carry the
// credentials there.
func TestRedirectNotFollowed(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "not a BMC", http.StatusNotFound)
	}))
	defer elsewhere.Close()
	redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	a, err := bmc.ParseAddress("test", "redfish+"+redirecting.URL+"/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	cred := bmc.Credential{Address: a, Username: "admin", Password: "secret", InsecureSkipCertificateCheck: true}
	if r := bmc.ReadPower(context.Background(), cred, bmc.Options{Timeout: time.Second}); r.Err == nil {
		t.Errorf("a redirect read as %q", r.State)
	}
	if cl, err := bmc.Connect(context.Background(), cred, bmc.Options{Timeout: time.Second}); err == nil {
		cl.Close()
		t.Error("a session opened through a redirect")
	}
	if n := reached.Load(); n > 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
}

// TestBodyLimited: a BMC that answers without end is an error, not a read without end.
func TestBodyLimited(t *testing.T) {
	endless := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		spaces := []byte(strings.Repeat(" ", 64<<10))
		for range 64 { // 4 MiB of white space before the JSON
			if _, err := w.Write(spaces); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`{"Systems": {"@odata.id": "/redfish/v1/Systems"}}`))
	}))
	defer endless.Close()
	a, err := bmc.ParseAddress("test", "redfish+"+endless.URL+"/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	r := bmc.ReadPower(context.Background(), bmc.Credential{Address: a, Username: "admin", Password: "x", InsecureSkipCertificateCheck: true}, bmc.Options{Timeout: 5 * time.Second})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "too large") {
		t.Errorf("an endless answer: %v", r.Err)
	}
}

// TestDescribeSanitises: what a BMC says reaches logs and tnfctl status on one line, bounded.
func TestDescribeSanitises(t *testing.T) {
	forged := bmc.PowerRead{State: "On\nlevel=INFO msg=\"BMC says PowerState Off\"\x1b[2J"}
	if got := forged.Describe("h"); strings.ContainsAny(got, "\n\x1b") {
		t.Errorf("control characters kept: %q", got)
	}
	long := bmc.PowerRead{Err: errors.New(strings.Repeat("x", 5000))}
	if got := long.Describe("h"); len(got) > 400 || !strings.HasSuffix(got, "…") {
		t.Errorf("a 5000-character error: %d characters: %q…", len(got), got[:40])
	}
}

// TestLogoutAfterTheDeadline: a session is ended even when the context the client was made with
// has ended (a read that took its whole deadline): the BMC keeps no session of ours.
func TestLogoutAfterTheDeadline(t *testing.T) {
	e := emulator.StartForTest(t, emulator.Config{Systems: []emulator.System{
		{ID: "1", Username: "admin", Password: "right", Power: emulator.Power{Backend: "fake"}}}})
	a, err := bmc.ParseAddress("test", "redfish+"+e.URL()+"/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := bmc.Connect(ctx, bmc.Credential{Address: a, Username: "admin", Password: "right", InsecureSkipCertificateCheck: true}, bmc.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := sessions(t, e); n != 1 {
		t.Fatalf("%d sessions open after connecting, want 1", n)
	}
	cancel()
	cl.Close()
	if n := sessions(t, e); n != 0 {
		t.Fatalf("%d sessions left open after Close", n)
	}
}

// sessions counts the sessions the emulator holds.
func sessions(t *testing.T, e *emulator.Emulator) int {
	t.Helper()
	req, err := http.NewRequest("GET", e.URL()+"/redfish/v1/SessionService/Sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", "right")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the emulator's own certificate
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Count int `json:"Members@odata.count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.Count
}

// TestOneRequestPerRead: a power read is one request, to the system itself (no service root,
// no session), and a BMC whose certificate is not checked gets none, so never the password: not
// when its certificate is not the pinned one, not when it is neither verified nor pinned.
func TestOneRequestPerRead(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"@odata.id": "/redfish/v1/Systems/1", "Id": "1", "PowerState": "Off"}`))
	}))
	defer srv.Close()
	a, err := bmc.ParseAddress("test", "redfish+"+srv.URL+"/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	pinned := bmc.Credential{Address: a, Username: "admin", Password: "secret", PinSHA256: bmc.Pin(srv.Certificate().Raw)}
	wrongPin := pinned
	wrongPin.PinSHA256 = strings.Repeat("0", 64)
	unchecked := bmc.Credential{Address: a, Username: "admin", Password: "secret"}
	for _, tc := range []struct {
		name, state, paths string
		cred               bmc.Credential
		err                string
	}{
		{"pinned", "Off", "GET /redfish/v1/Systems/1", pinned, ""},
		{"a wrong pin", "", "", wrongPin, "not the pinned"},
		{"neither verified nor pinned", "", "", unchecked, "neither verified nor pinned"},
	} {
		mu.Lock()
		paths = nil
		mu.Unlock()
		r := bmc.ReadPower(context.Background(), tc.cred, bmc.Options{Timeout: 5 * time.Second})
		mu.Lock()
		got := strings.Join(paths, ", ")
		mu.Unlock()
		if r.State != tc.state || got != tc.paths || (r.Err == nil) != (tc.err == "") || (r.Err != nil && !strings.Contains(r.Err.Error(), tc.err)) {
			t.Errorf("%s: read %q (%v) with requests %q, want %q (%q) with %q", tc.name, r.State, r.Err, got, tc.state, tc.err, tc.paths)
		}
	}
}
