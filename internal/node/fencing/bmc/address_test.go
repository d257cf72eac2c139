package bmc

import (
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	good := []struct {
		in       string
		endpoint string
		path, id string
	}{
		{"redfish+https://192.0.2.10:8000/redfish/v1/Systems/1", "https://192.0.2.10:8000", "/redfish/v1/Systems/1", "1"},
		{"redfish+https://bmc.example/redfish/v1/Systems/System.Embedded.1", "https://bmc.example:443", "/redfish/v1/Systems/System.Embedded.1", "System.Embedded.1"},
		{"redfish+http://192.0.2.10/redfish/v1/Systems/abc/", "http://192.0.2.10:80", "/redfish/v1/Systems/abc", "abc"},
		{"redfish+https://[fd00::10]:8443/redfish/v1/Systems/1", "https://[fd00::10]:8443", "/redfish/v1/Systems/1", "1"},
		{"redfish+https://[fd00::10]/redfish/v1/Systems/1", "https://[fd00::10]:443", "/redfish/v1/Systems/1", "1"},
		// The vendor forms of metal3's bare-metal hosts: the same Redfish service.
		{"idrac-redfish+https://192.0.2.20/redfish/v1/Systems/System.Embedded.1", "https://192.0.2.20:443", "/redfish/v1/Systems/System.Embedded.1", "System.Embedded.1"},
		{"idrac-virtualmedia://192.0.2.20/redfish/v1/Systems/System.Embedded.1", "https://192.0.2.20:443", "/redfish/v1/Systems/System.Embedded.1", "System.Embedded.1"},
		{"ilo5-redfish+https://192.0.2.21/redfish/v1/Systems/1", "https://192.0.2.21:443", "/redfish/v1/Systems/1", "1"},
		{"ilo5-virtualmedia+http://192.0.2.21:8080/redfish/v1/Systems/1", "http://192.0.2.21:8080", "/redfish/v1/Systems/1", "1"},
		{"redfish-virtualmedia+https://[fd00::21]/redfish/v1/Systems/1", "https://[fd00::21]:443", "/redfish/v1/Systems/1", "1"},
		{"redfish://192.0.2.22/redfish/v1/Systems/1", "https://192.0.2.22:443", "/redfish/v1/Systems/1", "1"},
	}
	for _, g := range good {
		a, err := ParseAddress("address", g.in)
		if err != nil || a.Endpoint() != g.endpoint || a.SystemPath != g.path || a.SystemID != g.id {
			t.Errorf("%s: %+v (%s), %v", g.in, a, a.Endpoint(), err)
		}
	}
	bad := []struct{ in, why string }{
		{"https://192.0.2.10/redfish/v1/Systems/1", "scheme"},
		{"ipmi://192.0.2.10", "scheme"},
		{"ilo5://192.0.2.21/redfish/v1/Systems/1", "scheme"},
		{"idrac://192.0.2.20/redfish/v1/Systems/1", "scheme"},
		{"redfish+ftp://192.0.2.10/redfish/v1/Systems/1", "+https or +http"},
		{"idrac-virtualmedia://192.0.2.20", "path"},
		{"redfish+https:///redfish/v1/Systems/1", "no host"},
		{"redfish+https://192.0.2.10:0/redfish/v1/Systems/1", "port"},
		{"redfish+https://192.0.2.10:99999/redfish/v1/Systems/1", "port"},
		{"redfish+https://192.0.2.10/redfish/v1/Systems/", "path"},
		{"redfish+https://192.0.2.10/redfish/v1/Managers/1", "path"},
		{"redfish+https://192.0.2.10/redfish/v1/Systems/1/Bios", "path"},
		{"redfish+https://user:pw@192.0.2.10/redfish/v1/Systems/1", "user info"},
		{"redfish+https://192.0.2.10/redfish/v1/Systems/1?x=1", "query"},
		{"redfish+https://fd00::10/redfish/v1/Systems/1", ""},
		{"", "scheme"},
		{"not a url at all", "scheme"},
	}
	for _, b := range bad {
		_, err := ParseAddress("controlPlane.fencing.credentials[1].address", b.in)
		if err == nil || !strings.Contains(err.Error(), "controlPlane.fencing.credentials[1].address") || !strings.Contains(err.Error(), b.why) {
			t.Errorf("%q: error %v, want one naming the field and %q", b.in, err, b.why)
		}
	}
}

// TestCheckPassword: what Pacemaker's cibsecret support would not read back whole is refused;
// everything else, leading white space and any character of a BMC's among it, passes.
func TestCheckPassword(t *testing.T) {
	for pw, want := range map[string]string{
		"s3cr3t!":                          "",
		"  leading spaces are read":        "",
		"inner space ok":                   "",
		"päss-wörd \"' $;`":                "",
		strings.Repeat("x", MaxPassword):   "",
		"":                                 "empty",
		strings.Repeat("x", MaxPassword+1): "255 bytes",
		"trailing ":                        "white space",
		"trailing tab\t":                   "white space",
		"two\nlines":                       "line break",
		"carriage\rreturn":                 "line break",
		"nul\x00":                          "NUL",
	} {
		err := CheckPassword(pw)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", pw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), pw) && pw != "" {
			t.Errorf("%q: the error holds the password", pw)
		}
	}
}
