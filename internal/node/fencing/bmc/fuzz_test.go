package bmc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// inMemory answers requests with a handler, without a socket.
type inMemory struct{ h http.Handler }

func (m inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// FuzzReadPower serves random bodies as a BMC's ComputerSystem to the power path (gofish's
// ComputerSystem, through the client's own body limit, in memory). Whatever a BMC answers, the
// read never panics, says "Off" only when the system said exactly that, and describes it on one
// bounded line.
func FuzzReadPower(f *testing.F) {
	f.Add([]byte(`{"@odata.id": "/redfish/v1/Systems/1", "Id": "1", "PowerState": "Off"}`))
	f.Add([]byte(`{"PowerState": "On\nOff"}`))
	f.Add([]byte(`{"PowerState": 7}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"Actions": {"#ComputerSystem.Reset": {"target": "http://elsewhere/"}}, "PowerState": "Off"}`))

	var mu sync.Mutex
	var system []byte
	bmcHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/redfish/v1/Systems/1" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(system)
	})
	connect := newTransport
	newTransport = func(*tls.Config, time.Duration) http.RoundTripper { return inMemory{bmcHandler} }
	f.Cleanup(func() { newTransport = connect })
	a, err := ParseAddress("fuzz", "redfish+https://192.0.2.1/redfish/v1/Systems/1")
	if err != nil {
		f.Fatal(err)
	}
	cred := Credential{Address: a, Username: "admin", Password: "secret", InsecureSkipCertificateCheck: true}

	f.Fuzz(func(t *testing.T, systemBody []byte) {
		mu.Lock()
		system = systemBody
		mu.Unlock()
		r := ReadPower(context.Background(), cred, Options{Timeout: 2 * time.Second})
		if r.Err == nil && r.State == "Off" {
			var said struct{ PowerState any }
			if err := json.Unmarshal(systemBody, &said); err != nil || said.PowerState != "Off" {
				t.Fatalf("read Off from %q", systemBody)
			}
		}
		d := r.Describe("h")
		if strings.ContainsAny(d, "\n\r\x1b") || len(d) > 400 {
			t.Fatalf("description not one bounded line: %q", d)
		}
		if strings.Contains(d, "secret") {
			t.Fatalf("the password in the description: %q", d)
		}
	})
}
