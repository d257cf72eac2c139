//go:build integration

package etcdagent_test

import (
	"crypto/tls"
	"crypto/x509"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/test/testca"
)

// newTestCA is a CA for the nodes' certificates.
func newTestCA(t testing.TB, name string) testca.CA {
	t.Helper()
	ca, err := testca.New(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// issue writes n's certificate for its IP, signed by ca, and its key, where n's parameters say.
// 127.0.0.1 too: etcd checks a peer's certificate against the address the connection comes
// from, and on loopback the kernel picks 127.0.0.1 as the source.
func issue(t testing.TB, ca testca.CA, n *node) {
	t.Helper()
	cert, key, err := ca.Issue(n.name, net.ParseIP(n.ip), net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, n.params["cert_file"], cert)
	writePEM(t, n.params["key_file"], key)
}

// writePEM replaces a file atomically, as the cluster-etcd-operator's installer does.
func writePEM(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// enableTLS gives every node of c a certificate for its IP, signed by one CA, used as serving,
// peer and client certificate (as OpenShift's etcd peer certificates are), and turns TLS on.
func enableTLS(t testing.TB, c *cluster) testca.CA {
	t.Helper()
	ca := newTestCA(t, "etcd test CA")
	c.caFile = filepath.Join(c.dir, "ca.pem")
	writePEM(t, c.caFile, ca.PEM())
	for _, n := range []*node{c.nodes["node1"], c.nodes["node2"]} {
		if err := os.MkdirAll(n.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		n.params["cert_file"] = filepath.Join(n.dir, "cert.pem")
		n.params["key_file"] = filepath.Join(n.dir, "key.pem")
		n.params["trusted_ca_file"] = c.caFile
		issue(t, ca, n)
	}
	return ca
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

// TestCARotation: the CA is rotated as the cluster-etcd-operator does it: first the bundle of
// the old and the new CA, and only once etcd trusts it every certificate reissued by the new
// one, each file written in place. etcd reads its certificate at every handshake but its CA
// bundle only at start: each node's next monitor after the bundle changed restarts etcd in
// place, and nothing restarts for the new certificates. Both keep their member IDs (no leave, no
// rejoin as a learner, no data moved aside), and clients that trust the new CA and present new
// certificates read every write.
func TestCARotation(t *testing.T) {
	c := newCluster(t)
	oldCA := enableTLS(t, c)
	leader, other := formCluster(t, c)
	acked := writeKeys(t, leader, 0, 20)
	ids := memberIDs(t, leader)

	newCA := newTestCA(t, "etcd test CA (rotated)")
	writePEM(t, c.caFile, append(oldCA.PEM(), newCA.PEM()...))
	for _, n := range []*node{leader, other} {
		if out := n.must("monitor", ocfPromoted); !strings.Contains(out, "restarting it in place") {
			t.Fatalf("%s's monitor after the new CA bundle:\n%s", n.name, out)
		}
	}
	for _, n := range []*node{leader, other} {
		issue(t, newCA, n)
	}
	for k, v := range writeKeys(t, other, 20, 30) {
		acked[k] = v
	}
	for _, n := range []*node{leader, other} {
		if out := n.must("monitor", ocfPromoted); strings.Contains(out, "restarting") {
			t.Fatalf("%s restarted for new certificates:\n%s", n.name, out)
		}
		sameKeys(t, n, acked)
		if got := memberIDs(t, n); !maps.Equal(got, ids) {
			t.Fatalf("%s's members after the rotation: %v, before: %v", n.name, got, ids)
		}
		if len(backups(t, n)) != 0 {
			t.Fatalf("%s moved its data aside: %v", n.name, backups(t, n))
		}
	}
	if logs := readLog(t, c); strings.Count(logs, "restarting it in place") != 2 || strings.Contains(logs, "left the member list") {
		t.Fatalf("want exactly one restart in place per node and no leave:\n%s", logs)
	}
}

// memberIDs is name → member ID of n's member list; a learner's name is marked.
func memberIDs(t testing.TB, n *node) map[string]uint64 {
	t.Helper()
	r := n.memberList()
	out := map[string]uint64{}
	for _, m := range r.Members {
		name := m.Name
		if m.IsLearner {
			name += " (learner)"
		}
		out[name] = m.ID
	}
	return out
}
