package bmc_test

import (
	"context"
	"net"
	"strings"
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
		return bmc.Credential{Address: a, Username: "admin", Password: pw}
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
		r := bmc.ReadPower(context.Background(), cred(tc.endpoint, tc.password), bmc.Options{Timeout: time.Second, BasicAuth: true})
		if got := r.Describe("h"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q (%v), want %q", tc.name, got, r.Err, tc.want)
		}
	}
}
