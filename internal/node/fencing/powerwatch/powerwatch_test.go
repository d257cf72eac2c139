package powerwatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

func credential(t *testing.T, pin string) bmc.Credential {
	t.Helper()
	a, err := bmc.ParseAddress("test", "redfish+https://192.0.2.1/redfish/v1/Systems/1")
	if err != nil {
		t.Fatal(err)
	}
	return bmc.Credential{Address: a, Username: "admin", Password: "pw", PinSHA256: pin}
}

// TestUsable: which of the watcher's reads count towards a proof, for every way a read can
// fail to: begun before the link was lost, cancelled by a later answer that is not Off, without
// an answer, too old, from the future, or read with another system or another check.
func TestUsable(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	boot := time.Hour // the boot clock now
	at := func(s float64) time.Duration { return boot + time.Duration(s*float64(time.Second)) }
	rd := func(began, answered float64, state string) Read {
		return Read{Began: at(began), At: at(answered), State: state}
	}
	failed := func(began, answered float64) Read { return Read{Began: at(began), At: at(answered), Err: "timeout"} }
	pin := strings.Repeat("ab", 32)
	c := credential(t, pin)
	rec := func(reads ...Read) Record {
		return Record{Node: "node2", System: system(c), Check: checkOf(c), LinkLost: at(-5), Reads: reads}
	}
	for _, tc := range []struct {
		name string
		r    Record
		cred bmc.Credential
		want []float64 // the answers' times of the usable reads
	}{
		{"two Off reads", rec(rd(-4, -3.9, "Off"), rd(-2.9, -2.8, "Off")), c, []float64{-3.9, -2.8}},
		{"none", rec(), c, nil},
		{"begun before the link was lost", rec(rd(-6, -4.9, "Off"), rd(-3, -2.9, "Off")), c, []float64{-2.9}},
		{"On cancels what came before", rec(rd(-4, -3.9, "Off"), rd(-3, -2.9, "On"), rd(-2, -1.9, "Off")), c, []float64{-1.9}},
		{"On last cancels all", rec(rd(-4, -3.9, "Off"), rd(-3, -2.9, "Off"), rd(-2, -1.9, "On")), c, nil},
		{"any answer but Off cancels", rec(rd(-4, -3.9, "Off"), rd(-3, -2.9, "PoweringOn")), c, nil},
		{"no answer neither counts nor cancels", rec(rd(-4, -3.9, "Off"), failed(-3, -2), rd(-1.5, -1.4, "Off")), c, []float64{-3.9, -1.4}},
		{"older than MaxAge", rec(rd(-12, -11, "Off"), rd(-2, -1.9, "Off")), c, []float64{-1.9}},
		{"from the future", rec(rd(-1, 0.5, "Off")), c, nil},
		{"another system", rec(rd(-4, -3.9, "Off")), func() bmc.Credential {
			o := c
			o.Address.SystemPath = "/redfish/v1/Systems/2"
			return o
		}(), nil},
		{"another pin", rec(rd(-4, -3.9, "Off")), credential(t, strings.Repeat("cd", 32)), nil},
		{"verified, not pinned", rec(rd(-4, -3.9, "Off")), func() bmc.Credential {
			o := credential(t, "")
			o.VerifyCertificate = true
			return o
		}(), nil},
	} {
		tc.r.LinkLost = at(-5)
		if tc.name == "older than MaxAge" {
			tc.r.LinkLost = at(-20)
		}
		var got []float64
		for _, r := range Usable(tc.r, tc.cred, now, boot) {
			got = append(got, r.At.Sub(now).Seconds())
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if d := got[i] - tc.want[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestLoadTakesOnlyRootsRecords: a record fences a node, so one that another user wrote, or
// could have, is refused, and so is one in a folder others may write; no record is no error.
func TestLoadTakesOnlyRootsRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "power")
	c := credential(t, strings.Repeat("ab", 32))
	path := Path(dir, c)
	if _, ok, err := Load(path); ok || err != nil {
		t.Fatalf("no record: %v %v", ok, err)
	}
	want := Record{Node: "node2", System: system(c), Check: checkOf(c), LinkLost: BootClock()}
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := Load(path); !ok || err != nil || got.System != want.System || got.LinkLost != want.LinkLost {
		t.Fatalf("written and loaded: %+v %v %v", got, ok, err)
	}
	for _, mode := range []struct {
		path string
		mode os.FileMode
	}{{path, 0o622}, {dir, 0o777}} {
		if err := os.Chmod(mode.path, mode.mode); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := Load(path); ok || err == nil || !strings.Contains(err.Error(), "writable by others") {
			t.Errorf("%s mode %v: %v %v", mode.path, mode.mode, ok, err)
		}
		if err := os.Chmod(mode.path, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}
