package nodetoken

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig of server with ca (by value; by file when caFile is set)
// and token to dir/name.
func writeKubeconfig(t *testing.T, dir, name, server string, ca []byte, caFile, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, CertificateAuthority: caFile}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	path := filepath.Join(dir, name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFollowCA: the node's kubeconfig takes the kubelet's CA bundle when the kubelet's names the
// same server and another bundle, and nothing else of it changes; otherwise it is left alone.
func TestFollowCA(t *testing.T) {
	const api = "https://api-int.example.com:6443"
	for _, tc := range []struct {
		name          string
		kubeletServer string
		kubeletCA     string
		noKubelet     bool
		caByFile      bool // the node's kubeconfig names its CA by file
		written       bool
	}{
		{"the bundle rotated", api, "new", false, false, true},
		{"the same bundle", api, "old", false, false, false},
		{"another server", "https://elsewhere:6443", "new", false, false, false},
		{"no kubelet kubeconfig", "", "", true, false, false},
		{"a CA by file", api, "new", false, true, false},
	} {
		dir := t.TempDir()
		ca, caFile := []byte("old"), ""
		if tc.caByFile {
			ca, caFile = nil, filepath.Join(dir, "ca.crt")
		}
		path := writeKubeconfig(t, dir, "node.kubeconfig", api, ca, caFile, "the-token")
		kubelet := filepath.Join(dir, "absent")
		if !tc.noKubelet {
			kubelet = writeKubeconfig(t, dir, "kubelet", tc.kubeletServer, []byte(tc.kubeletCA), "", "bootstrap")
		}
		written, err := FollowCA(path, kubelet)
		if err != nil || written != tc.written {
			t.Errorf("%s: %v, %v; want written %v", tc.name, written, err, tc.written)
			continue
		}
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := string(ca)
		if tc.written {
			want = "new"
		}
		if got := cfg.Clusters["c"]; got.Server != api || !bytes.Equal(got.CertificateAuthorityData, []byte(want)) || cfg.AuthInfos["u"].Token != "the-token" {
			t.Errorf("%s: %+v %q", tc.name, got, cfg.AuthInfos["u"].Token)
		}
		if st, _ := os.Stat(path); tc.written && st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", tc.name, st.Mode())
		}
	}
}

// serviceAccountToken is a token with a ServiceAccount's claims, as the API issues one (the
// signature is nobody's: nothing here checks it).
func serviceAccountToken(t *testing.T, namespace, name string, issued, expires time.Time) string {
	t.Helper()
	var c claims
	c.IssuedAt, c.ExpiresAt = jwt.NewNumericDate(issued), jwt.NewNumericDate(expires)
	c.Kubernetes.Namespace, c.Kubernetes.ServiceAccount.Name = namespace, name
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte("not a key of any API"))
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// TestInstallRefusesBeforeWriting: what can be refused without an API is refused before anything
// is written, and the error holds no token.
func TestInstallRefusesBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	kubelet := writeKubeconfig(t, dir, "kubelet", "https://api-int.example.com:6443", []byte("no PEM"), "", "bootstrap")
	node1 := Account{Namespace: "openshift-etcd", Name: "tnf-node-node1"}
	node1Token := serviceAccountToken(t, "openshift-etcd", "tnf-node-node1", now.Add(-time.Hour), now.Add(time.Hour))
	for _, tc := range []struct{ name, token, kubelet, want string }{
		{"empty", "\n", kubelet, "one line expected"},
		{"two tokens", "a\nb", kubelet, "one line expected"},
		{"the peer's", serviceAccountToken(t, "openshift-etcd", "tnf-node-node2", now.Add(-time.Hour), now.Add(time.Hour)), kubelet,
			"the token is serviceaccount openshift-etcd/tnf-node-node2's, not openshift-etcd/tnf-node-node1's"},
		{"expired", serviceAccountToken(t, "openshift-etcd", "tnf-node-node1", now.Add(-2*time.Hour), now.Add(-time.Hour)), kubelet,
			"the token expired at 2026-11-29T08:00:00Z"},
		{"no kubelet kubeconfig", node1Token, filepath.Join(dir, "absent"), "give --server and --certificate-authority"},
		{"a CA bundle without PEM", node1Token, kubelet, "the API's CA bundle holds no PEM certificate"},
	} {
		path := filepath.Join(dir, "out", "node.kubeconfig")
		_, err := Install{Path: path, Token: tc.token, For: node1, Kubelet: tc.kubelet}.Write(context.Background(), now)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (len(tc.token) > 3 && strings.Contains(err.Error(), tc.token)) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s: written", tc.name)
		}
	}
}
