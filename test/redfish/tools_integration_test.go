//go:build integration

// Package redfish_test runs the built tools together: bin/redfish-emulator in its quick-start
// mode and bin/tnfctl fence-check with bin/fence_tnf_redfish, the second fencing level's agent.
package redfish_test

import (
	"bufio"
	"encoding/pem"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

const password = "Tr1cky-p4ss"

// emulator starts bin/redfish-emulator --fake 2 on free loopback ports and returns its base URL,
// its fault endpoint and the CA it wrote.
func emulator(t *testing.T, pwFile string) (url, admin, ca string) {
	return emulatorOn(t, pwFile, "127.0.0.1:0")
}

// emulatorOn is emulator with the Redfish service on listen.
func emulatorOn(t *testing.T, pwFile, listen string) (url, admin, ca string) {
	certs := t.TempDir()
	cmd := exec.Command(testbin.Path(t, "redfish-emulator"), "--fake", "2", "--listen", listen, "--admin-listen", "127.0.0.1:0",
		"--user", "admin", "--password-file", pwFile, "--cert-out", certs)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("emulator did not start: %v", err)
	}
	m := regexp.MustCompile(`on (https://\S+), CA in (\S+), faults at (http://\S+)/faults`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("unexpected start line %q", line)
	}
	return m[1], m[3], m[2]
}

func tnfctl(t *testing.T, args ...string) (string, int) {
	t.Helper()
	args = append([]string{"fence-check", "--fence-agent", testbin.Path(t, "fence_tnf_redfish")}, args...)
	out, err := exec.Command(testbin.Path(t, "tnfctl"), args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), password) {
		t.Fatalf("the password is in tnfctl's output:\n%s", out)
	}
	return string(out), code
}

func TestFenceCheck(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	wrong := filepath.Join(dir, "wrong")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrong, []byte("nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, admin, ca := emulator(t, pw)
	addr := "redfish+" + url + "/redfish/v1/Systems/2"
	base := []string{"--address", addr, "--username", "admin", "--timeout", "5s"}
	certPEM, err := os.ReadFile(filepath.Join(filepath.Dir(ca), "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	pin := bmc.Pin(block.Bytes)

	rows := []struct {
		name  string
		extra []string
		code  int
		want  []string
	}{
		{"good, with the CA", []string{"--password-file", pw, "--ca-file", ca}, 0,
			[]string{"redfish: ok: system 2 (System 2) is On", "fence_tnf_redfish: ok: Status: On"}},
		{"good, basic auth", []string{"--password-file", pw, "--ca-file", ca, "--basic-auth"}, 0, []string{"redfish: ok", "fence_tnf_redfish: ok"}},
		// Neither verified nor pinned: no password goes out, and the check gives the pin.
		{"verification disabled", []string{"--password-file", pw, "--certificate-verification", "Disabled"}, 1,
			[]string{"redfish: FAILED: the BMC's certificate is neither verified nor pinned", "SHA-256 " + pin, "fence_tnf_redfish: FAILED: the BMC's certificate"}},
		{"verification disabled, opted out", []string{"--password-file", pw, "--certificate-verification", "Disabled", "--insecure-skip-certificate-check"}, 0,
			[]string{"redfish: ok", "fence_tnf_redfish: ok"}},
		{"pinned", []string{"--password-file", pw, "--certificate-verification", "Disabled", "--certificate-sha256", pin}, 0,
			[]string{"redfish: ok", "fence_tnf_redfish: ok"}},
		{"a wrong pin", []string{"--password-file", pw, "--certificate-verification", "Disabled", "--certificate-sha256", strings.Repeat("0", 64)}, 1,
			[]string{"redfish: FAILED", "not the pinned", "fence_tnf_redfish: FAILED"}},
		{"unknown CA", []string{"--password-file", pw}, 1,
			[]string{"redfish: FAILED", "certificate", "fence_tnf_redfish: FAILED", "unknown authority"}},
		{"wrong password", []string{"--password-file", wrong, "--ca-file", ca}, 1, []string{"redfish: FAILED", "401", "fence_tnf_redfish: FAILED"}},
		{"wrong password, as JSON", []string{"--password-file", wrong, "--ca-file", ca, "-o", "json"}, 1,
			[]string{`"check": "redfish",`, `"ok": false,`, `"check": "fence_tnf_redfish",`}},
	}
	for _, r := range rows {
		out, code := tnfctl(t, append(base, r.extra...)...)
		if code != r.code {
			t.Errorf("%s: exit %d, want %d\n%s", r.name, code, r.code, out)
		}
		for _, w := range r.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", r.name, w, out)
			}
		}
	}

	// A BMC that hangs: both checks give up at their deadline and say so.
	req, _ := http.NewRequest("PUT", admin+"/faults", strings.NewReader(`{"hangNext": 100}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("setting faults: %v", err)
	}
	out, code := tnfctl(t, "--address", addr, "--username", "admin", "--password-file", pw, "--ca-file", ca, "--timeout", "2s")
	if code != 1 || !strings.Contains(out, "redfish: FAILED") || !strings.Contains(out, "fence_tnf_redfish: FAILED: no answer within 2s") {
		t.Fatalf("hung BMC: exit %d\n%s", code, out)
	}
}

// TestFenceCheckIPv6AndVendorSchemes: a BMC on an IPv6 address, named in the vendor forms of
// metal3's bare-metal hosts, passes both checks: the Redfish API and the fence agent.
func TestFenceCheckIPv6AndVendorSchemes(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _, ca := emulatorOn(t, pw, "[::1]:0")
	hostPort := strings.TrimPrefix(url, "https://")
	if !strings.HasPrefix(hostPort, "[::1]:") {
		t.Fatalf("the emulator serves %s, want [::1]", url)
	}
	for _, scheme := range []string{"redfish+https", "idrac-redfish+https", "idrac-virtualmedia", "ilo5-redfish+https", "redfish-virtualmedia+https"} {
		addr := scheme + "://" + hostPort + "/redfish/v1/Systems/2"
		out, code := tnfctl(t, "--address", addr, "--username", "admin", "--password-file", pw, "--ca-file", ca, "--timeout", "5s")
		if code != 0 || !strings.Contains(out, "redfish: ok") || !strings.Contains(out, "fence_tnf_redfish: ok") {
			t.Errorf("%s: exit %d\n%s", addr, code, out)
		}
	}
}

func TestFenceCheckBadInput(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(password), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		args []string
		want string
	}{
		{[]string{"--address", "https://192.0.2.1/redfish/v1/Systems/1", "--username", "u", "--password-file", pw}, "--address"},
		{[]string{"--address", "redfish+https://192.0.2.1/redfish/v1/Managers/1", "--username", "u", "--password-file", pw}, "--address"},
		{[]string{"--address", "redfish+https://192.0.2.1/redfish/v1/Systems/1", "--username", "u", "--password-file", "/nonexistent"}, "--password-file"},
		{[]string{"--address", "redfish+https://192.0.2.1/redfish/v1/Systems/1", "--username", "u", "--password-file", pw, "--certificate-verification", "Maybe"}, "--certificate-verification"},
		{[]string{"--username", "u", "--password-file", pw}, "address"},
	}
	for _, r := range rows {
		out, code := tnfctl(t, r.args...)
		if code == 0 || !strings.Contains(out, r.want) {
			t.Errorf("%v: exit %d, want an error naming %s:\n%s", r.args, code, r.want, out)
		}
	}
}
