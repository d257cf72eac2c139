package metricsauth

import (
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		name      string
		listen    string
		plaintext bool
		missing   []string
		want      Mode
		addr, why string
	}{
		{"every file", ":9665", false, nil, Secure, ":9665", "TLS"},
		{"no kubeconfig yet", ":9665", false, []string{"/etc/tnf/secrets/node.kubeconfig"}, Loopback, "127.0.0.1:9665", "no /etc/tnf/secrets/node.kubeconfig"},
		{"no file, an address given", "10.0.0.11:9700", false, []string{"a", "b"}, Loopback, "127.0.0.1:9700", "no a, b"},
		{"the test setting, without files", ":9665", true, []string{"a"}, Plaintext, ":9665", "--insecure-plaintext"},
		{"the test setting, with files", "10.0.0.11:9665", true, nil, Plaintext, "10.0.0.11:9665", "--insecure-plaintext"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mode, addr, why, err := Choose(c.listen, c.plaintext, c.missing)
			if err != nil || mode != c.want || addr != c.addr || !strings.Contains(why, c.why) {
				t.Fatalf("%v %s (%q) %v, want %v %s (%q)", mode, addr, why, err, c.want, c.addr, c.why)
			}
		})
	}
	if _, _, _, err := Choose("9665", false, nil); err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("a listen address without a port: %v", err)
	}
}
