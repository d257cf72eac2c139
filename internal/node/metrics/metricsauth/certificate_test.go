package metricsauth

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/test/testca"
)

// TestCertificateRenewed: a renewed pair is served at the next handshake; a pair that does not
// load (the certificate renewed, its key not yet) leaves the last good one served, logged once;
// files that do not exist at start are an error naming them.
func TestCertificateRenewed(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca, err := testca.New("service-ca")
	if err != nil {
		t.Fatal(err)
	}
	issue := func() (cert, key []byte) {
		cert, key, err := ca.Issue("tnf-metrics", net.IPv4(127, 0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		return cert, key
	}
	write := func(name string, data []byte) {
		// As the node's copy of the Secret is written: a new file renamed over the old.
		if err := os.WriteFile(name+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(name+".new", name); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	c := &Certificate{CertFile: certFile, KeyFile: keyFile, Log: slog.New(slog.NewTextHandler(&log, nil))}
	if err := c.Load(); err == nil || !strings.Contains(err.Error(), certFile) {
		t.Fatalf("no files: %v", err)
	}
	cert1, key1 := issue()
	write(certFile, cert1)
	write(keyFile, key1)
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		got, err := c.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return got.Leaf.SerialNumber.String()
	}
	first := serial()

	cert2, key2 := issue()
	write(certFile, cert2) // its key not yet
	for range 3 {
		if got := serial(); got != first {
			t.Fatalf("a certificate without its key served: serial %s, want the first's %s", got, first)
		}
	}
	if n := strings.Count(log.String(), "do not load"); n != 1 {
		t.Fatalf("a mismatched pair logged %d times, want once:\n%s", n, log.String())
	}
	write(keyFile, key2)
	second := serial()
	if second == first {
		t.Fatal("the renewed certificate is not served")
	}
	if !strings.Contains(log.String(), "serving a new certificate") {
		t.Errorf("the renewal is not logged:\n%s", log.String())
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	if got := serial(); got != second {
		t.Fatalf("with the key gone: serial %s, want the last good %s", got, second)
	}
}
