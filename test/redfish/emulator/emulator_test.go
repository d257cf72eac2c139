package emulator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/redfish"
	"golang.org/x/crypto/bcrypt"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

func fakeSystem(id, user, pw string) System {
	return System{ID: id, Username: user, Password: pw, Power: Power{Backend: "fake"}}
}

func httpsClient(t *testing.T, e *Emulator) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(e.CAPEM()) {
		t.Fatal("no CA")
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func caFile(t *testing.T, e *Emulator) string {
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, e.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func credential(t *testing.T, e *Emulator, id, user, pw string) bmc.Credential {
	a, err := bmc.ParseAddress("address", "redfish+"+e.URL()+"/redfish/v1/Systems/"+id)
	if err != nil {
		t.Fatal(err)
	}
	return bmc.Credential{Address: a, Username: user, Password: pw, VerifyCertificate: true, CAFile: caFile(t, e)}
}

// TestBadRequests: malformed input gets the right status and a Redfish JSON error.
func TestBadRequests(t *testing.T) {
	e := StartForTest(t, Config{Systems: []System{fakeSystem("1", "admin", "pw1"), fakeSystem("2", "other", "pw2")}})
	c := httpsClient(t, e)
	reset := "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"
	rows := []struct {
		name, method, path, user, pw, body string
		want                               int
	}{
		{"service root needs no auth", "GET", "/redfish/v1", "", "", "", 200},
		{"service root with slash", "GET", "/redfish/v1/", "", "", "", 200},
		{"systems without credentials", "GET", "/redfish/v1/Systems", "", "", "", 401},
		{"wrong password", "GET", "/redfish/v1/Systems/1", "admin", "nope", "", 401},
		{"unknown user", "GET", "/redfish/v1/Systems/1", "root", "pw1", "", 401},
		{"unknown system", "GET", "/redfish/v1/Systems/9", "admin", "pw1", "", 404},
		{"another BMC's system", "GET", "/redfish/v1/Systems/2", "admin", "pw1", "", 404},
		{"unknown resource", "GET", "/redfish/v1/Managers", "admin", "pw1", "", 404},
		{"malformed JSON", "POST", reset, "admin", "pw1", `{"ResetType":`, 400},
		{"missing ResetType", "POST", reset, "admin", "pw1", `{}`, 400},
		{"unknown ResetType", "POST", reset, "admin", "pw1", `{"ResetType":"Explode"}`, 400},
		{"reset of an unknown system", "POST", "/redfish/v1/Systems/9/Actions/ComputerSystem.Reset", "admin", "pw1", `{"ResetType":"On"}`, 404},
		{"GET on an action", "GET", reset, "admin", "pw1", "", 405},
		{"DELETE a system", "DELETE", "/redfish/v1/Systems/1", "admin", "pw1", "", 405},
		{"session with bad credentials", "POST", "/redfish/v1/SessionService/Sessions", "", "", `{"UserName":"admin","Password":"x"}`, 401},
		{"session with malformed body", "POST", "/redfish/v1/SessionService/Sessions", "", "", `[`, 400},
		{"good reset", "POST", reset, "admin", "pw1", `{"ResetType":"ForceOff"}`, 204},
	}
	for _, r := range rows {
		req, _ := http.NewRequest(r.method, e.URL()+r.path, strings.NewReader(r.body))
		if r.user != "" {
			req.SetBasicAuth(r.user, r.pw)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != r.want {
			t.Errorf("%s: %d, want %d (%v)", r.name, resp.StatusCode, r.want, body)
			continue
		}
		if r.want >= 400 {
			if _, ok := body["error"].(map[string]any)["@Message.ExtendedInfo"]; !ok {
				t.Errorf("%s: not a Redfish error: %v", r.name, body)
			}
		}
		if r.want == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s: no Allow header", r.name)
		}
	}
}

// TestGofish: gofish reads and resets a system with Basic auth and with a session.
func TestGofish(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("hashed-pw"), bcrypt.MinCost)
	var log bytes.Buffer
	e := StartForTest(t, Config{Log: slog.New(slog.NewTextHandler(&log, nil)), Systems: []System{
		fakeSystem("1", "admin", "pw1"),
		{ID: "2", Username: "admin2", PasswordHash: string(hash), Power: Power{Backend: "fake", Fake: FakePower{Initial: "Off"}}},
	}})
	for _, basic := range []bool{true, false} {
		for _, s := range []struct{ id, user, pw, initial string }{{"1", "admin", "pw1", "On"}, {"2", "admin2", "hashed-pw", "Off"}} {
			cl, err := bmc.Connect(context.Background(), credential(t, e, s.id, s.user, s.pw), bmc.Options{BasicAuth: basic})
			if err != nil {
				t.Fatalf("basic=%v system %s: %v", basic, s.id, err)
			}
			st, err := cl.PowerState()
			if err != nil || string(st) != s.initial {
				t.Fatalf("basic=%v system %s: power %q, %v", basic, s.id, st, err)
			}
			other := redfish.ForceOffResetType
			if s.initial == "Off" {
				other = redfish.OnResetType
			}
			if err := cl.Reset(other); err != nil {
				t.Fatal(err)
			}
			if st, _ := cl.PowerState(); string(st) == s.initial {
				t.Fatalf("basic=%v system %s: reset %s did nothing", basic, s.id, other)
			}
			if err := cl.Reset(redfish.ResetType(map[string]string{"On": "On", "Off": "ForceOff"}[s.initial])); err != nil {
				t.Fatal(err)
			}
			cl.Close()
		}
	}
	if want := `msg="power action" system="System 2" reset=On client=gofish/1.0`; !strings.Contains(log.String(), want) {
		t.Fatalf("no %q in the power actions' log:\n%s", want, log.String())
	}
	e.mu.Lock()
	open := len(e.sessions)
	e.mu.Unlock()
	if open != 0 {
		t.Fatalf("%d sessions left open after logout", open)
	}
	if _, err := bmc.Connect(context.Background(), credential(t, e, "1", "admin", "wrong"), bmc.Options{}); err == nil {
		t.Fatal("session opened with a wrong password")
	}
	insecure := credential(t, e, "1", "admin", "pw1")
	insecure.CAFile = ""
	if _, err := bmc.Connect(context.Background(), insecure, bmc.Options{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverified certificate accepted: %v", err)
	}
	insecure.VerifyCertificate = false
	if _, err := bmc.Connect(context.Background(), insecure, bmc.Options{}); !errors.Is(err, bmc.ErrUnchecked) {
		t.Fatalf("certificateVerification Disabled, no pin: %v", err)
	}
	insecure.InsecureSkipCertificateCheck = true
	if cl, err := bmc.Connect(context.Background(), insecure, bmc.Options{}); err != nil {
		t.Fatalf("certificateVerification Disabled, opted out: %v", err)
	} else {
		cl.Close()
	}
}

// TestFaults: 5xx replies, hung requests (the client's deadline ends them), added latency, a
// stuck power state, and a slow BMC; set through the admin endpoint.
func TestFaults(t *testing.T) {
	e := StartForTest(t, Config{AdminListen: "127.0.0.1:0", Systems: []System{
		fakeSystem("1", "admin", "pw"),
		{ID: "slow", Username: "admin", Password: "pw", Power: Power{Backend: "fake", Fake: FakePower{Delay: duration.Duration{Duration: 300 * time.Millisecond}}}},
	}})
	setFaults := func(f string) {
		req, _ := http.NewRequest("PUT", e.AdminURL()+"/faults", strings.NewReader(f))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("PUT /faults %s: %v %v", f, err, resp)
		}
		resp.Body.Close()
	}
	c := httpsClient(t, e)
	get := func() int {
		req, _ := http.NewRequest("GET", e.URL()+"/redfish/v1/Systems/1", nil)
		req.SetBasicAuth("admin", "pw")
		resp, err := c.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	setFaults(`{"failNext": 2, "failCode": 500}`)
	if a, b, c := get(), get(), get(); a != 500 || b != 500 || c != 200 {
		t.Fatalf("failNext 2: %d %d %d", a, b, c)
	}
	setFaults(`{"hangNext": 1}`)
	cl, err := bmc.Connect(context.Background(), credential(t, e, "1", "admin", "pw"), bmc.Options{Timeout: 500 * time.Millisecond, BasicAuth: true})
	if err == nil {
		cl.Close()
		t.Fatal("a hung request did not time out")
	}
	if got := get(); got != 200 {
		t.Fatalf("after the hang: %d", got)
	}
	setFaults(`{"latency": "200ms"}`)
	began := time.Now()
	if got := get(); got != 200 || time.Since(began) < 200*time.Millisecond {
		t.Fatalf("latency: %d after %v", got, time.Since(began))
	}
	setFaults(`{"stuck": {"1": "On"}}`)
	cl, err = bmc.Connect(context.Background(), credential(t, e, "1", "admin", "pw"), bmc.Options{BasicAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Reset(redfish.ForceOffResetType); err != nil {
		t.Fatal(err)
	}
	if st, _ := cl.PowerState(); st != redfish.OnPowerState {
		t.Fatalf("stuck system changed power: %s", st)
	}
	setFaults(`{}`)
	slow, err := bmc.Connect(context.Background(), credential(t, e, "slow", "admin", "pw"), bmc.Options{BasicAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if err := slow.Reset(redfish.ForceOffResetType); err != nil {
		t.Fatal(err)
	}
	if st, _ := slow.PowerState(); st != redfish.OnPowerState {
		t.Fatalf("slow BMC changed at once: %s", st)
	}
	for i := 0; ; i++ {
		if st, _ := slow.PowerState(); st == redfish.OffPowerState {
			break
		}
		if i == 50 {
			t.Fatal("slow BMC never powered off")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, bad := range []string{`{"stuck": {"nope": "On"}}`, `{"unknown": 1}`, `[`} {
		req, _ := http.NewRequest("PUT", e.AdminURL()+"/faults", bytes.NewBufferString(bad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 400 {
			t.Errorf("PUT /faults %s: %v %v", bad, err, resp.StatusCode)
		}
		resp.Body.Close()
	}
}

func TestConfigValidation(t *testing.T) {
	dir := t.TempDir()
	rows := []struct{ yaml, want string }{
		{"systems: []", "systems"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake}}, {id: '1', username: u, password: p, power: {backend: fake}}]", "systems[1].id"},
		{"systems: [{id: 'a/b', username: u, password: p, power: {backend: fake}}]", "systems[0].id"},
		{"systems: [{id: '1', password: p, power: {backend: fake}}]", "systems[0].username"},
		{"systems: [{id: '1', username: u, power: {backend: fake}}]", "exactly one of password"},
		{"systems: [{id: '1', username: u, password: p, passwordHash: x, power: {backend: fake}}]", "exactly one of password"},
		{"systems: [{id: '1', username: u, passwordHash: notbcrypt, power: {backend: fake}}]", "systems[0].passwordHash"},
		{"systems: [{id: '1', username: u, passwordFile: /nonexistent, power: {backend: fake}}]", "systems[0].passwordFile"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: ipmi}}]", "systems[0].power.backend"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: exec, exec: {powerOn: [x]}}}]", "systems[0].power.exec"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: qemu}}]", "systems[0].power.qemu.command"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake, fake: {initial: Maybe}}}]", "systems[0].power.fake.initial"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake, fake: {delay: soon}}}]", "duration"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake}}]\nfaults: {stuck: {'2': On}}", "faults.stuck"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake}}]\ntls: {cert: /x}", "tls"},
		{"systems: [{id: '1', username: u, password: p, power: {backend: fake}}]\nbogus: 1", "bogus"},
	}
	for i, r := range rows {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(r.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("row %d: error %v, want one naming %s and the file", i, err, r.want)
		}
	}
}

// TestExecBackend: power through commands, as the network-namespace nodes use it.
func TestExecBackend(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state, []byte("On"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script, "sh", state} }
	e := StartForTest(t, Config{Systems: []System{{ID: "n1", Username: "admin", Password: "pw", Power: Power{Backend: "exec", Exec: ExecPower{
		PowerOn: sh(`printf On > "$1"`), PowerOff: sh(`printf Off > "$1"`), Status: sh(`cat "$1"`),
	}}}}})
	// Only QEMU keeps state: a test that kills this emulator (an unreachable BMC) leaves no folder.
	if e.stateDir != "" {
		t.Errorf("an emulator without QEMU made %s", e.stateDir)
	}
	cl, err := bmc.Connect(context.Background(), credential(t, e, "n1", "admin", "pw"), bmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sys, err := cl.System()
	if err != nil || sys.PowerState != redfish.OnPowerState {
		t.Fatalf("%v %v", sys, err)
	}
	for _, rt := range sys.SupportedResetTypes {
		if rt == redfish.NmiResetType {
			t.Fatal("Nmi offered without an nmi command")
		}
	}
	for _, step := range []struct {
		reset redfish.ResetType
		want  redfish.PowerState
	}{{redfish.ForceOffResetType, redfish.OffPowerState}, {redfish.OnResetType, redfish.OnPowerState}, {redfish.PowerCycleResetType, redfish.OnPowerState}, {redfish.GracefulShutdownResetType, redfish.OffPowerState}} {
		if err := cl.Reset(step.reset); err != nil {
			t.Fatal(err)
		}
		if st, _ := cl.PowerState(); st != step.want {
			t.Fatalf("after %s: %s, want %s", step.reset, st, step.want)
		}
	}
	if err := os.WriteFile(state, []byte("Broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.PowerState(); err == nil {
		t.Fatal("a status command printing neither On nor Off was accepted")
	}
}

// TestGivenCertificate: the emulator serves a certificate and key it is given; clients verify
// it with their own CA.
func TestGivenCertificate(t *testing.T) {
	// Generate a CA and serving certificate the way the emulator does, then hand them over.
	gen := Config{Listen: "127.0.0.1:0", TLS: TLS{CertOut: t.TempDir()}}
	tlsConf, caPEM, err := serverTLS(gen)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	leaf := tlsConf.Certificates[0]
	if err := os.WriteFile(certFile, pemBlock("CERTIFICATE", leaf.Certificate[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pemBlock("PRIVATE KEY", keyDER), 0o600); err != nil {
		t.Fatal(err)
	}
	e := StartForTest(t, Config{TLS: TLS{Cert: certFile, Key: keyFile}, Systems: []System{fakeSystem("1", "admin", "pw")}})
	if e.CAPEM() != nil {
		t.Fatal("a CA was generated although a certificate was given")
	}
	c := credential(t, e, "1", "admin", "pw")
	if err := os.WriteFile(c.CAFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cl, err := bmc.Connect(context.Background(), c, bmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
