//go:build integration

package cluster_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// loneAPI is a real kube-apiserver on loopback over a real etcd of one member, without the two
// nodes: for the scenarios that test what a node reads from and proves to the API (its Secrets,
// the metrics endpoint's callers), which need no failover.
type loneAPI struct{ *kubeapi.Server }

// startLoneAPI starts etcd and kube-apiserver in a folder of the test; both are stopped by their
// PIDs when the test ends. users get a token each; "admin" is in system:masters.
func startLoneAPI(t *testing.T, users ...string) loneAPI {
	t.Helper()
	dir := t.TempDir()
	etcdClient, etcdPeer := freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + etcdClient
	testproc.Start(t, filepath.Join(dir, "etcd.log"), testbin.Path(t, "etcd"), "--name=api-store", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+etcdPeer, "--initial-advertise-peer-urls=http://127.0.0.1:"+etcdPeer,
		"--initial-cluster=api-store=http://127.0.0.1:"+etcdPeer)
	return loneAPI{kubeapi.Start(t, testbin.Path(t, "kube-apiserver"), dir, kubeapi.Etcd{Servers: []string{etcdURL}}, users...)}
}

// Kubeconfig writes a kubeconfig of user's token into dir and returns its path.
func (a loneAPI) Kubeconfig(t *testing.T, dir, user string) string {
	path := filepath.Join(dir, user+".kubeconfig")
	if err := os.WriteFile(path, kubeconfig(t, a.URL, a.CAFile, a.Token(user)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
