// Package testetcd runs a real etcd (bin/etcd, or TNF_ETCD's) as a member of its own on loopback
// for the integration tests that need one: its data, a snapshot of it. For tests only.
package testetcd

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// loopbackURL is a URL on a port of loopback free a moment ago.
func loopbackURL(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// Start runs etcd as a member named name on dataDir, stopped when the test ends; initial makes
// a new cluster of one there, else it starts from the data. It returns a client and the
// member's client URL once the member serves.
func Start(t testing.TB, dataDir, name string, initial bool) (*clientv3.Client, string) {
	t.Helper()
	client, peer := loopbackURL(t), loopbackURL(t)
	args := []string{"--name", name, "--data-dir", dataDir, "--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer}
	if initial {
		args = append(args, "--initial-cluster", name+"="+peer)
	}
	testproc.Start(t, filepath.Join(t.TempDir(), "etcd.log"), testbin.Etcd(t), args...)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, err := cli.Get(ctx, "probe"); err == nil {
			return cli, client
		} else if ctx.Err() != nil {
			t.Fatalf("etcd on %s did not serve: %v", dataDir, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Snapshot saves a snapshot of the member at endpoint into file, with etcdctl snapshot save as
// an administrator takes one.
func Snapshot(t testing.TB, endpoint, file string) {
	t.Helper()
	if out, err := exec.Command(testbin.Path(t, "etcdctl"), "--endpoints", endpoint, "snapshot", "save", file).CombinedOutput(); err != nil {
		t.Fatalf("etcdctl snapshot save: %v\n%s", err, out)
	}
}
