package fencerun

import (
	"context"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

func cred(t *testing.T, addr string, verify bool) bmc.Credential {
	a, err := bmc.ParseAddress("address", addr)
	if err != nil {
		t.Fatal(err)
	}
	return bmc.Credential{Address: a, Username: "admin", Password: "pa ss=word", VerifyCertificate: verify}
}

func TestStdinAndArgv(t *testing.T) {
	r := Redfish{Agent: "/usr/sbin/fence_redfish", Action: "status", Credential: cred(t, "redfish+https://[fd00::1]:8443/redfish/v1/Systems/7", false), PowerTimeout: 5}
	in, err := r.Stdin()
	if err != nil {
		t.Fatal(err)
	}
	want := "action=status\nip=[fd00::1]\nipport=8443\nusername=admin\npassword=pa ss=word\nsystems_uri=/redfish/v1/Systems/7\nssl_insecure=1\npower_timeout=5\n"
	if in != want {
		t.Fatalf("stdin:\n%s\nwant:\n%s", in, want)
	}
	cmd, err := r.Command(context.Background())
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

	r = Redfish{Action: "status", Credential: cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1", true), Discover: true}
	in, _ = r.Stdin()
	if strings.Contains(in, "systems_uri") || strings.Contains(in, "ssl_insecure") || !strings.Contains(in, "ipport=443\n") {
		t.Fatalf("discovery with verification: %q", in)
	}
}

func TestStdinRejects(t *testing.T) {
	if _, err := (Redfish{Action: "status", Credential: cred(t, "redfish+http://192.0.2.1/redfish/v1/Systems/1", true)}).Stdin(); err == nil || !strings.Contains(err.Error(), "HTTPS only") {
		t.Errorf("http accepted: %v", err)
	}
	c := cred(t, "redfish+https://192.0.2.1/redfish/v1/Systems/1", true)
	c.Password = "a\nb"
	if _, err := (Redfish{Action: "status", Credential: c}).Stdin(); err == nil {
		t.Error("a password with a line break would inject an option")
	}
}
