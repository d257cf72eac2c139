//go:build integration

package emulator

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
)

// fence runs the real fence_redfish against the emulator exactly as Pacemaker's fencer would,
// bounded so that a hang fails the test instead of stalling it. The layer's own levels do not
// run it (fence_tnf_redfish checks a pin or a BMC's own CA, which fence_redfish cannot); the
// emulator must answer it as a BMC does all the same: it is what OpenShift's own configuration
// fences with.
func fence(t *testing.T, e *Emulator, action, id, pw string, verify, discover bool, powerTimeout int) fencerun.Result {
	t.Helper()
	c := credential(t, e, id, "admin", pw)
	opts := []fencerun.Option{{Name: "ip", Value: c.Address.Host}, {Name: "ipport", Value: strconv.Itoa(c.Address.Port)},
		{Name: "username", Value: c.Username}, {Name: "password", Value: c.Password}}
	if !discover { // without systems_uri fence_redfish takes the last member of Systems
		opts = append(opts, fencerun.Option{Name: "systems_uri", Value: c.Address.SystemPath})
	}
	var env []string
	if verify { // python-requests takes a CA bundle only from the environment
		env = append(env, "REQUESTS_CA_BUNDLE="+c.CAFile)
	} else {
		opts = append(opts, fencerun.Option{Name: "ssl_insecure", Value: "1"})
	}
	if powerTimeout > 0 {
		opts = append(opts, fencerun.Option{Name: "power_timeout", Value: strconv.Itoa(powerTimeout)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := fencerun.Call{Agent: fenceRedfish, Action: action, Options: opts, Env: env}.Run(ctx)
	if err != nil {
		t.Fatalf("fence_redfish %s: %v", action, err)
	}
	return res
}

// fenceRedfish is where Debian and RHEL install fence_redfish.
const fenceRedfish = "/usr/sbin/fence_redfish"

func power(t *testing.T, e *Emulator, id string) string {
	st, err := e.systems[id].power.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestFenceRedfish: Debian's fence_redfish, with systems_uri and with discovery, with
// --ssl-insecure and with the emulator's CA, through every action Pacemaker uses.
func TestFenceRedfish(t *testing.T) {
	if _, err := exec.LookPath(fenceRedfish); err != nil {
		t.Fatalf("fence_redfish is not installed (Debian package fence-agents): %v", err)
	}
	e := StartForTest(t, Config{Systems: []System{
		fakeSystem("1", "admin", "pw"),
		{ID: "2", Username: "admin", Password: "pw", Power: Power{Backend: "fake", Fake: FakePower{Delay: duration.Duration{Duration: time.Second}}}},
	}})
	for _, verify := range []bool{true, false} {
		for _, discover := range []bool{false, true} {
			// Discovery takes the last system, "2", the slow one.
			id := "1"
			if discover {
				id = "2"
			}
			steps := []struct {
				action, wantOut, wantPower string
				wantCode                   int
			}{
				{"status", "Status: ON", "On", 0},
				{"monitor", "", "On", 0},
				{"list", "List option is not working on this device", "On", 0}, // fence_redfish has no outlets to list
				{"off", "Success: Powered OFF", "Off", 0},
				{"status", "Status: OFF", "Off", 2},
				{"on", "Success: Powered ON", "On", 0},
				{"reboot", "Success: Rebooted", "On", 0},
			}
			for _, s := range steps {
				res := fence(t, e, s.action, id, "pw", verify, discover, 0)
				if res.Code != s.wantCode || !strings.Contains(res.Output, s.wantOut) || power(t, e, id) != s.wantPower {
					t.Fatalf("verify=%v discover=%v %s: exit %d, power %s, output:\n%s", verify, discover, s.action, res.Code, power(t, e, id), res.Output)
				}
			}
		}
	}
}

// TestFenceRedfishFailures: a wrong password fails at once; a machine stuck on makes "off" end
// with fence_redfish's own timeout; 5xx replies fail the status.
func TestFenceRedfishFailures(t *testing.T) {
	e := StartForTest(t, Config{Systems: []System{fakeSystem("1", "admin", "pw")}})
	if res := fence(t, e, "status", "1", "wrong", true, false, 0); res.Code == 0 || res.Code == 2 {
		t.Fatalf("wrong password: exit %d\n%s", res.Code, res.Output)
	}
	if res := fence(t, e, "status", "1", "wrong", true, true, 0); res.Code == 0 || res.Code == 2 {
		t.Fatalf("wrong password with discovery: exit %d\n%s", res.Code, res.Output)
	}
	e.SetFaults(Faults{Stuck: map[string]string{"1": "On"}})
	res := fence(t, e, "off", "1", "pw", true, false, 2)
	if res.Code == 0 || !strings.Contains(res.Output, "Timed out waiting to power OFF") {
		t.Fatalf("stuck on: exit %d\n%s", res.Code, res.Output)
	}
	e.SetFaults(Faults{FailNext: 5})
	if res := fence(t, e, "status", "1", "pw", true, false, 0); res.Code == 0 || res.Code == 2 {
		t.Fatalf("503 replies: exit %d\n%s", res.Code, res.Output)
	}
	if strings.Contains(res.Output, "pw") && !strings.Contains(res.Output, "<redacted>") {
		t.Fatal("password in the agent's output")
	}
}
