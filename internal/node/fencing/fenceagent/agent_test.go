package fenceagent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
	"github.com/tnf-layer/tnf-layer/test/testca"
)

const password = "pw-7f3a9c"

// bmcFor starts a BMC emulator (plain, in-process) with system "on" and system "off".
func bmcFor(t *testing.T) *emulator.Emulator {
	t.Helper()
	sys := func(id, initial string) emulator.System {
		return emulator.System{ID: id, Username: "admin", Password: password, Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: initial}}}
	}
	return emulator.StartForTest(t, emulator.Config{Systems: []emulator.System{sys("on", "On"), sys("off", "Off")}})
}

// stdin is what the fencer gives the agent for system on e's BMC: its certificate pinned.
func stdin(t *testing.T, e *emulator.Emulator, system, action string, extra ...string) string {
	t.Helper()
	return unpinned(t, e, system, action, append([]string{"ssl_fingerprint=" + pinOf(t, e)}, extra...)...)
}

// unpinned is stdin without the pin, certificate verification off. Each read may take 30 s
// (read_timeout) unless extra says otherwise: what these tests assert is what a read finds, and
// under the race detector on a busy machine a connection to the emulator once took more than the
// 3 s default (a later value replaces an earlier one).
func unpinned(t *testing.T, e *emulator.Emulator, system, action string, extra ...string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(strings.TrimPrefix(e.URL(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"action=" + action, "ip=" + host, "ipport=" + port, "username=admin", "password=" + password,
		"systems_uri=/redfish/v1/Systems/" + system, "ssl_insecure=1", "nodename=node2", "pcmk_host_list=node2", "read_timeout=30"}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// pinOf is the SHA-256 of the certificate e serves, read as a client sees it.
func pinOf(t *testing.T, e *emulator.Emulator) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(e.URL(), "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reading the certificate to pin it
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return bmc.Pin(conn.ConnectionState().PeerCertificates[0].Raw)
}

type result struct {
	code        int
	out, errOut string
	took        time.Duration
}

// run runs the first level's agent.
func run(t *testing.T, args []string, in string) result {
	t.Helper()
	return runAgent(t, PowerOff, args, in)
}

func runAgent(t *testing.T, a Agent, args []string, in string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	began := time.Now()
	code := a.Main(context.Background(), args, strings.NewReader(in), &out, &errOut)
	r := result{code, out.String(), errOut.String(), time.Since(began)}
	if strings.Contains(r.out+r.errOut, password) {
		t.Fatalf("the password is in the agent's output")
	}
	return r
}

func TestActions(t *testing.T) {
	e := bmcFor(t)
	for _, tc := range []struct {
		name   string
		in     string
		code   int
		output string
	}{
		{"off of a system that is off", stdin(t, e, "off", "off", "gap=0.2"), 0, "proven off"},
		{"reboot of a system that is off", stdin(t, e, "off", "reboot", "gap=0.2"), 0, "proven off"},
		{"off of a system that is on", stdin(t, e, "on", "off"), 1, `read 1 says PowerState \"On\"`},
		{"reboot of a system that is on", stdin(t, e, "on", "reboot"), 1, "the next fencing level decides"},
		{"status on", stdin(t, e, "on", "status"), 0, "Status: On"},
		{"status off", stdin(t, e, "off", "status"), 2, "Status: Off"},
		{"monitor", stdin(t, e, "on", "monitor"), 0, "Status: On"},
		{"validate-all", stdin(t, e, "on", "validate-all"), 0, ""},
		{"list", "action=list\n", 0, ""},
		{"on is refused", stdin(t, e, "off", "on"), 1, "never powers a node"},
		{"wrong password", strings.Replace(stdin(t, e, "off", "off"), "password="+password, "password=nope", 1), 1, "401"},
		{"missing ip", "action=off\nusername=a\npassword=b\nsystems_uri=/redfish/v1/Systems/1\n", 1, "ip: required"},
		{"bad gap", stdin(t, e, "off", "off", "gap=soon"), 1, `gap: \"soon\"`},
		{"bad systems_uri", strings.Replace(stdin(t, e, "off", "off"), "/redfish/v1/Systems/off", "/Systems", 1), 1, "systems_uri"},
		{"not name=value", "action=off\nip\n", 1, "line 2: not name=value"},
	} {
		r := run(t, nil, tc.in)
		if r.code != tc.code || !strings.Contains(r.out+r.errOut, tc.output) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", tc.name, r.code, tc.code, tc.output, r.out, r.errOut)
		}
	}
}

// TestProofTakesTheGap: success needs two reads gap apart; a first read that is not Off fails
// without waiting for the gap.
func TestProofTakesTheGap(t *testing.T) {
	e := bmcFor(t)
	if r := run(t, nil, stdin(t, e, "off", "off", "gap=1")); r.code != 0 || r.took < time.Second {
		t.Errorf("off: exit %d after %v, want 0 after at least 1s", r.code, r.took)
	}
	if r := run(t, nil, stdin(t, e, "on", "off", "gap=5")); r.code != 1 || r.took >= 5*time.Second {
		t.Errorf("on: exit %d after %v, want 1 before the 5s gap", r.code, r.took)
	}
}

// TestSlowOrHungBMC: a BMC that hangs or answers slower than read_timeout fails the level
// within about read_timeout, so the next level runs.
func TestSlowOrHungBMC(t *testing.T) {
	e := bmcFor(t)
	for _, f := range []emulator.Faults{{HangNext: 100}, {Latency: duration.Duration{Duration: 3 * time.Second}}} {
		e.SetFaults(f)
		r := run(t, nil, stdin(t, e, "off", "off", "read_timeout=0.5"))
		if r.code != 1 || r.took > 2*time.Second {
			t.Errorf("faults %+v: exit %d after %v, want 1 within 2s:\n%s", f, r.code, r.took, r.errOut)
		}
	}
}

func TestCommandLine(t *testing.T) {
	for _, args := range [][]string{{"-o", "metadata"}, {"--action", "metadata"}, {"--action=metadata"}} {
		// pcs gives no standard input: metadata must not read it.
		if r := run(t, args, "this is not read"); r.code != 0 || !strings.Contains(r.out, "<resource-agent") {
			t.Errorf("%q: exit %d\n%s", args, r.code, r.errOut)
		}
	}
	for _, args := range [][]string{{"--password", password}, {"-o"}, {"--ip=192.0.2.1"}} {
		if r := run(t, args, ""); r.code != 1 || !strings.Contains(r.errOut, "usage") {
			t.Errorf("%d: exit %d\n%s", len(args), r.code, r.errOut)
		}
	}
}

// TestMetadata: each agent's document parses, names every option Parse reads and the actions
// Main answers, and no "on" (Pacemaker would take the agent for one that can unfence).
func TestMetadata(t *testing.T) {
	common := "action ip ipport username password systems_uri ssl_insecure ssl_ca_file ssl_fingerprint insecure_skip_certificate_check"
	for _, tc := range []struct {
		agent Agent
		want  string
	}{
		{PowerOff, common + " gap read_timeout"},
		{Redfish, common + " read_timeout power_timeout"},
	} {
		data, err := tc.agent.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		var md metadata
		if err := xml.Unmarshal(data, &md); err != nil {
			t.Fatal(err)
		}
		var params []string
		for _, p := range md.Parameters {
			params = append(params, p.Name)
		}
		if got := strings.Join(params, " "); got != tc.want {
			t.Errorf("%s: parameters %q, want %q", tc.agent.Name, got, tc.want)
		}
		for _, a := range md.Actions {
			if a.Name == "on" {
				t.Errorf("%s: metadata offers on", tc.agent.Name)
			}
		}
		if len(md.Actions) != len(Actions) || md.Name != tc.agent.Name {
			t.Errorf("metadata %+v", md)
		}
	}
}

// certWithoutIPs writes a certificate that names no address, as most BMC certificates name
// none they are reached at, and returns its files.
func certWithoutIPs(t *testing.T) (cert, key string) {
	t.Helper()
	ca, err := testca.New("BMC vendor CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("bmc.example")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, data := range map[string][]byte{cert: certPEM, key: keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}

// TestProofNeedsACheckedCertificate: a BMC whose certificate names no address proves a node
// off when its certificate is pinned; unverified and unpinned, its "Off" proves nothing unless
// the administrator allowed that; a wrong pin and a verification the name fails prove nothing.
func TestProofNeedsACheckedCertificate(t *testing.T) {
	cert, key := certWithoutIPs(t)
	e := emulator.StartForTest(t, emulator.Config{TLS: emulator.TLS{Cert: cert, Key: key}, Systems: []emulator.System{
		{ID: "off", Username: "admin", Password: password, Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: "Off"}}}}})
	verified := strings.Replace(unpinned(t, e, "off", "off", "gap=0.2"), "ssl_insecure=1\n", "", 1)
	for _, tc := range []struct {
		name   string
		in     string
		code   int
		output string
	}{
		{"pinned", stdin(t, e, "off", "off", "gap=0.2"), 0, "proven off"},
		{"pinned, colons and capitals", unpinned(t, e, "off", "off", "gap=0.2", "ssl_fingerprint="+colons(pinOf(t, e))), 0, "proven off"},
		{"a wrong pin", unpinned(t, e, "off", "off", "gap=0.2", "ssl_fingerprint="+strings.Repeat("0", 64)), 1, "not the pinned"},
		{"unverified, unpinned", unpinned(t, e, "off", "off", "gap=0.2"), 1, "neither verified nor pinned"},
		{"unverified, proofs allowed", unpinned(t, e, "off", "off", "gap=0.2", "unverified_proof=1"), 0, "proven off"},
		{"verified, the name does not match", verified, 1, "certificate"},
	} {
		r := run(t, nil, tc.in)
		if r.code != tc.code || !strings.Contains(r.out+r.errOut, tc.output) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", tc.name, r.code, tc.code, tc.output, r.out, r.errOut)
		}
	}
}

// colons spells a hex pin as openssl prints a fingerprint: capitals, a colon between bytes.
func colons(pin string) string {
	var parts []string
	for i := 0; i < len(pin); i += 2 {
		parts = append(parts, strings.ToUpper(pin[i:i+2]))
	}
	return strings.Join(parts, ":")
}

// TestProofWithTheBMCsCA: a BMC whose certificate names its address and is signed by a CA the
// node holds (ssl_ca_file) is verified, so its "Off" proves the node off; without that CA the
// certificate is not trusted and proves nothing.
func TestProofWithTheBMCsCA(t *testing.T) {
	ca, err := testca.New("BMC vendor CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("bmc", net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM, "ca.pem": ca.PEM()}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := emulator.StartForTest(t, emulator.Config{TLS: emulator.TLS{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")},
		Systems: []emulator.System{{ID: "off", Username: "admin", Password: password, Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: "Off"}}}}})
	verified := strings.Replace(unpinned(t, e, "off", "off", "gap=0.2"), "ssl_insecure=1\n", "", 1)
	if r := run(t, nil, verified+"ssl_ca_file="+filepath.Join(dir, "ca.pem")+"\n"); r.code != 0 || !strings.Contains(r.errOut, "proven off") {
		t.Errorf("verified with the BMC's CA: exit %d\n%s", r.code, r.errOut)
	}
	if r := run(t, nil, verified); r.code != 1 || !strings.Contains(r.errOut, "certificate") {
		t.Errorf("without the BMC's CA: exit %d\n%s", r.code, r.errOut)
	}
}
