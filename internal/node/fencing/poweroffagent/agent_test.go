package poweroffagent

import (
	"bytes"
	"context"
	"encoding/xml"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
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

func stdin(t *testing.T, e *emulator.Emulator, system, action string, extra ...string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(strings.TrimPrefix(e.URL(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"action=" + action, "ip=" + host, "ipport=" + port, "username=admin", "password=" + password,
		"systems_uri=/redfish/v1/Systems/" + system, "ssl_insecure=1", "nodename=node2", "pcmk_host_list=node2"}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

type result struct {
	code        int
	out, errOut string
	took        time.Duration
}

func run(t *testing.T, args []string, in string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	began := time.Now()
	code := Main(context.Background(), args, strings.NewReader(in), &out, &errOut)
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

// TestMetadata: the document parses, names every option Parse reads and the actions Main
// answers, and no "on" (Pacemaker would take the agent for one that can unfence).
func TestMetadata(t *testing.T) {
	data, err := Metadata()
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
	if got, want := strings.Join(params, " "), "action ip ipport username password systems_uri ssl_insecure gap read_timeout"; got != want {
		t.Errorf("parameters %q, want %q", got, want)
	}
	for _, a := range md.Actions {
		if a.Name == "on" {
			t.Error("metadata offers on")
		}
	}
	if len(md.Actions) != len(Actions) || md.Name != Name {
		t.Errorf("metadata %+v", md)
	}
}
