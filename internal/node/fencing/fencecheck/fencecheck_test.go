package fencecheck

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/identity"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
)

func TestVerdict(t *testing.T) {
	rows := map[string]string{
		"Status: ON\n": "Status: ON",
		`time=2026-11-28T05:00:00.000Z level=ERROR msg="the BMC did not answer" agent=fence_tnf_redfish err="reading /redfish/v1/Systems/1: 401"` + "\n": "the BMC did not answer: reading /redfish/v1/Systems/1: 401",
		"usage: fence_tnf_redfish\nnot logfmt \"\n": `not logfmt "`,
		"": "(no output)",
	}
	for in, want := range rows {
		if got := verdict(in); got != want {
			t.Errorf("verdict(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Result{Check: "redfish", Detail: "401"}).String(); got != "redfish: FAILED: 401" {
		t.Error(got)
	}
}

// TestIdentity reads two BMC systems through the real gofish client from the emulator, which
// lists each machine's NICs: an entry that reaches its own node's machine passes, swapped
// entries and a BMC that says Off for a live member are refused, naming why.
func TestIdentity(t *testing.T) {
	machines := map[string]identity.Identity{
		"node1": identity.New("", []string{"02:77:00:00:00:01"}),
		"node2": identity.New("", []string{"02:77:00:00:00:02"}),
	}
	sys := func(id, mac, power string) emulator.System {
		return emulator.System{ID: id, Username: "admin", Password: "pw", MACs: []string{mac},
			Power: emulator.Power{Backend: "fake", Fake: emulator.FakePower{Initial: power}}}
	}
	e := emulator.StartForTest(t, emulator.Config{Systems: []emulator.System{
		sys("1", "02:77:00:00:00:01", "On"), sys("2", "02:77:00:00:00:02", "On"), sys("3", "02:77:00:00:00:03", "Off"),
		sys("4", "", "On")}})
	cred := func(system string) bmc.Credential {
		a, err := bmc.ParseAddress("test", "redfish+"+e.URL()+"/redfish/v1/Systems/"+system)
		if err != nil {
			t.Fatal(err)
		}
		return bmc.Credential{Address: a, Username: "admin", Password: "pw", InsecureSkipCertificateCheck: true} // the emulator's own certificate
	}
	machines["node3"] = identity.New("", []string{"02:77:00:00:00:03"})
	machines["node4"] = identity.New("", []string{"02:77:00:00:00:04"}) // its BMC lists no NIC
	for _, tc := range []struct {
		name, target, system string
		unverified           bool
		ok                   bool
		detail               string
	}{
		{"its own machine", "node1", "1", false, true, "is node1's machine"},
		{"swapped", "node1", "2", false, false, "swapped"},
		{"swapped, unverified identity allowed", "node1", "2", true, false, "swapped"},
		{"Off for a live member", "node3", "3", false, false, "live Corosync member"},
		{"nothing to compare", "node4", "4", false, false, "nothing to compare"},
		{"nothing to compare, unverified identity allowed", "node4", "4", true, true, "not checked (unverifiedIdentity)"},
	} {
		results := Check(context.Background(), cred(tc.system), Options{Timeout: 5 * time.Second, Agent: "/nonexistent", BasicAuth: true,
			Target: tc.target, Machines: machines, Member: true, UnverifiedIdentity: tc.unverified})
		if len(results) != 3 || results[2].Check != "identity" {
			t.Fatalf("%s: %v", tc.name, results)
		}
		if r := results[2]; r.OK != tc.ok || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("%s: %s, want ok %v with %q", tc.name, r, tc.ok, tc.detail)
		}
	}
}

// TestUncheckedBMCGetsNoPassword: a BMC whose certificate is neither verified nor pinned fails
// both checks before any request reaches it, and the redfish line gives the SHA-256 of the
// certificate it serves, which pins it; the same BMC pinned passes.
func TestUncheckedBMCGetsNoPassword(t *testing.T) {
	certs := t.TempDir()
	e := emulator.StartForTest(t, emulator.Config{TLS: emulator.TLS{CertOut: certs}, Systems: []emulator.System{
		{ID: "1", Username: "admin", Password: "pw", Power: emulator.Power{Backend: "fake"}}}})
	a, err := bmc.ParseAddress("test", "redfish+"+e.URL()+"/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	served, err := bmc.ServedCertificate(context.Background(), a, 5*time.Second, nil)
	if err != nil || served.Untrusted == nil {
		t.Fatalf("the emulator's certificate, against the system's CAs: %+v, %v", served, err)
	}
	unchecked := bmc.Credential{Address: a, Username: "admin", Password: "pw"}
	results := Check(context.Background(), unchecked, Options{Timeout: 5 * time.Second, Agent: "/nonexistent"})
	if r := results[0]; r.OK || !strings.Contains(r.Detail, "neither verified nor pinned") || !strings.Contains(r.Detail, "SHA-256 "+served.Pin) ||
		!strings.Contains(r.Detail, "this node's CAs do not verify it") {
		t.Errorf("unchecked: %s", r)
	}
	// Against the CA that signed it, verification would check it (no password sent either way).
	ca, err := os.ReadFile(filepath.Join(certs, "ca.pem"))
	roots := x509.NewCertPool()
	if err != nil || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("the emulator's CA: %v", err)
	}
	if r := Check(context.Background(), unchecked, Options{Timeout: 5 * time.Second, Agent: "/nonexistent", Roots: roots})[0]; r.OK ||
		!strings.Contains(r.Detail, "this node's CAs verify it for "+a.Host) {
		t.Errorf("unchecked, its CA among the roots: %s", r)
	}
	if r := results[1]; r.OK || r.Check != "nonexistent" || !strings.Contains(r.Detail, "neither verified nor pinned") {
		t.Errorf("unchecked, the agent: %s", r)
	}
	pinned := unchecked
	pinned.PinSHA256 = served.Pin
	if r := Check(context.Background(), pinned, Options{Timeout: 5 * time.Second, Agent: "/nonexistent"})[0]; !r.OK {
		t.Errorf("pinned: %s", r)
	}
}
