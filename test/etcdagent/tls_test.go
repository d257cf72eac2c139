//go:build integration

package etcdagent_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// enableTLS gives every node of c a certificate for its IP, signed by one CA, used as serving,
// peer and client certificate (as OpenShift's etcd peer certificates are), and turns TLS on.
func enableTLS(t testing.TB, c *cluster) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(path string, typ string, der []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caFile := filepath.Join(c.dir, "ca.pem")
	write(caFile, "CERTIFICATE", caDER)
	c.caFile = caFile
	for i, n := range []*node{c.nodes["node1"], c.nodes["node2"]} {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(10 + i)), Subject: pkix.Name{CommonName: n.name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			// 127.0.0.1 too: etcd checks a peer's certificate against the address the connection
			// comes from, and on loopback the kernel picks 127.0.0.1 as the source.
			IPAddresses: []net.IP{net.ParseIP(n.ip), net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		if err := os.MkdirAll(n.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		n.params["cert_file"] = filepath.Join(n.dir, "cert.pem")
		n.params["key_file"] = filepath.Join(n.dir, "key.pem")
		n.params["trusted_ca_file"] = caFile
		write(n.params["cert_file"], "CERTIFICATE", der)
		write(n.params["key_file"], "EC PRIVATE KEY", keyDER)
	}
}

// clientTLS is what the test's own etcd clients present.
func (n *node) clientTLS() *tls.Config {
	if n.c.caFile == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(n.params["cert_file"], n.params["key_file"])
	if err != nil {
		n.c.t.Fatal(err)
	}
	pem, err := os.ReadFile(n.c.caFile)
	if err != nil {
		n.c.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}
}

// TestTLS: client and peer TLS with client-certificate authentication, through formation,
// fencing, the forced cluster of one and the rejoin; the fast monitor reads over HTTPS too.
func TestTLS(t *testing.T) {
	c := newCluster(t)
	enableTLS(t, c)
	leader, other := formCluster(t, c)
	acked := writeKeys(t, leader, 0, 20)
	leader.fence()
	other.notify("stop", leader.name)
	for k, v := range writeKeys(t, other, 20, 30) {
		acked[k] = v
	}
	other.must("monitor", ocfPromoted)
	leader.must("start", ocfSuccess)
	catchUpAndPromote(t, leader, other)
	sameKeys(t, leader, acked)
}
