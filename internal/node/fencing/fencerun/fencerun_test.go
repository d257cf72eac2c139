package fencerun

import (
	"context"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

func cred(t *testing.T, addr string) bmc.Credential {
	a, err := bmc.ParseAddress("address", addr)
	if err != nil {
		t.Fatal(err)
	}
	return bmc.Credential{Address: a, Username: "admin", Password: "pa ss=word", VerifyCertificate: true}
}

func TestStdinAndArgv(t *testing.T) {
	c := cred(t, "redfish+https://[fd00::1]:8443/redfish/v1/Systems/7")
	c.VerifyCertificate, c.PinSHA256 = false, strings.Repeat("ab", 32)
	opts, err := BMCOptions(c)
	if err != nil {
		t.Fatal(err)
	}
	call := Call{Agent: "/usr/sbin/fence_tnf_redfish", Action: "status", Options: opts}
	in, err := call.Stdin()
	if err != nil {
		t.Fatal(err)
	}
	want := "action=status\nip=[fd00::1]\nipport=8443\nusername=admin\npassword=pa ss=word\nsystems_uri=/redfish/v1/Systems/7\nssl_fingerprint=" + c.PinSHA256 + "\n"
	if in != want {
		t.Fatalf("stdin:\n%s\nwant:\n%s", in, want)
	}
	cmd, err := call.Command(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cmd.Args) != 1 {
		t.Fatalf("the agent gets arguments %q; options go on stdin only", cmd.Args)
	}
	for _, e := range cmd.Env {
		if strings.Contains(e, "pa ss=word") {
			t.Fatal("the password is in the environment")
		}
	}
}

// TestBMCOptionsCheckTheCertificate: each way a BMC's certificate is checked gives its options,
// and one that nothing checks gives none unless the administrator opted out by name.
func TestBMCOptionsCheckTheCertificate(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name         string
		verify, skip bool
		pin, ca      string
		want, err    string
	}{
		{"verified with the system's CAs", true, false, "", "", "", ""},
		{"verified with the BMC's CA", true, false, "", "/etc/tnf/bmc-ca/n.pem", "ssl_ca_file=/etc/tnf/bmc-ca/n.pem", ""},
		{"pinned", false, false, pin, "", "ssl_fingerprint=" + pin, ""},
		{"pinned and verified", true, false, pin, "", "ssl_fingerprint=" + pin, ""},
		{"unchecked", false, false, "", "", "", "neither verified nor pinned"},
		{"unchecked, opted out", false, true, "", "", "ssl_insecure=1 insecure_skip_certificate_check=1", ""},
	} {
		c := cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1")
		c.VerifyCertificate, c.InsecureSkipCertificateCheck, c.PinSHA256, c.CAFile = tc.verify, tc.skip, tc.pin, tc.ca
		opts, err := BMCOptions(c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var tls []string
		for _, o := range opts[5:] {
			tls = append(tls, o.Name+"="+o.Value)
		}
		if got := strings.Join(tls, " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestStdinRejects(t *testing.T) {
	if _, err := BMCOptions(cred(t, "redfish+http://192.0.2.1/redfish/v1/Systems/1")); err == nil || !strings.Contains(err.Error(), "HTTPS only") {
		t.Errorf("http accepted: %v", err)
	}
	c := cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1")
	c.Password = "a\nb"
	opts, err := BMCOptions(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Call{Action: "status", Options: opts}).Stdin(); err == nil {
		t.Error("a password with a line break would inject an option")
	}
}
