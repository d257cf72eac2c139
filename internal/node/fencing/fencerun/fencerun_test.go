package fencerun

import (
	"context"
	"maps"
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

// TestDeviceCredential reads a fence device's parameters back into the credential they were made
// from (BMCOptions's, for the layer's agents), and the operator's fence_redfish devices, whose
// unchecked certificate stays unchecked: nothing opts out on a device's behalf. (A pin replaces
// every other check, so a pinned credential reads back as verified too, which changes nothing.)
func TestDeviceCredential(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, c := range []bmc.Credential{
		cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1"),
		func() bmc.Credential {
			c := cred(t, "redfish+https://[fd00::1]:8443/redfish/v1/Systems/7")
			c.CAFile = "/etc/tnf/bmc-ca/n.pem"
			return c
		}(),
		func() bmc.Credential {
			c := cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1")
			c.PinSHA256 = pin
			return c
		}(),
	} {
		opts, err := BMCOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		params := map[string]string{"pcmk_host_list": "n1"}
		for _, o := range opts {
			params[o.Name] = o.Value
		}
		got, err := DeviceCredential("fence-n1", params)
		if err != nil || got != c {
			t.Errorf("%s: %+v, %v; want %+v", c.Address.Endpoint(), got, err, c)
		}
	}

	operator := map[string]string{"username": "admin", "password": "s3cret", "ip": "192.0.2.100", "ipport": "8000",
		"systems_uri": "/redfish/v1/Systems/1", "pcmk_host_list": "master-0", "pcmk_delay_base": "10s", "ssl_insecure": "1"}
	got, err := DeviceCredential("master-0_redfish", operator)
	if err != nil || got.Address.Endpoint() != "https://192.0.2.100:8000" || got.VerifyCertificate || got.InsecureSkipCertificateCheck ||
		got.Password != "s3cret" || got.CheckTrust() == nil {
		t.Errorf("the operator's unchecked device: %+v, %v", got, err)
	}
	for name, change := range map[string]func(map[string]string){
		"password: missing":          func(p map[string]string) { delete(p, "password") },
		"ip: missing":                func(p map[string]string) { p["ip"] = "" },
		"ip, ipport and systems_uri": func(p map[string]string) { p["systems_uri"] = "/redfish/v1/Managers/1" },
		"ssl_fingerprint":            func(p map[string]string) { p["ssl_fingerprint"] = "ab:cd" },
	} {
		p := maps.Clone(operator)
		change(p)
		if _, err := DeviceCredential("master-0_redfish", p); err == nil || !strings.Contains(err.Error(), "fence device master-0_redfish: "+name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got, _ := DeviceCredential("d", map[string]string{"ipaddr": "192.0.2.1", "login": "a", "passwd": "p", "systems-uri": "/redfish/v1/Systems/1"}); got.Address.Port != 443 || got.Username != "a" {
		t.Errorf("fence_redfish's aliases and default port: %+v", got)
	}
}

// TestBool reads ssl_insecure's values as the fencing library does.
func TestBool(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "yes": true, "On": true, "TRUE": true, `"1"`: true,
		"0": false, "no": false, "off": false, "false": false, "": false, "y": false, "2": false} {
		if got := Bool(v); got != want {
			t.Errorf("Bool(%q) = %v, want %v", v, got, want)
		}
	}
}
