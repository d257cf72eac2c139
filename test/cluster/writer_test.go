//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
)

// etcdClient reaches the nodes' etcd from inside their network namespaces; the test closes it.
func (c *cluster) etcdClient(nodes ...string) *clientv3.Client {
	c.t.Helper()
	cli, err := c.newEtcdClient(nodes...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cli.Close() })
	return cli
}

// etcdURL is node's etcd client URL.
func (c *cluster) etcdURL(node string) string {
	scheme := "http"
	if c.etcdTLS != nil {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(c.ip[node], etcdPort)
}

// newEtcdClient reaches the nodes' etcd from inside their network namespaces.
func (c *cluster) newEtcdClient(nodes ...string) (*clientv3.Client, error) {
	nsByIP := map[string]string{}
	var eps []string
	for _, n := range nodes {
		nsByIP[c.ip[n]] = c.layout.Nodes[n].NetNS
		eps = append(eps, c.etcdURL(n))
	}
	return clientv3.New(clientv3.Config{
		Endpoints: eps, DialTimeout: 2 * time.Second, Logger: zap.NewNop(), TLS: c.etcdTLS,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(_ context.Context, addr string) (net.Conn, error) {
			if i := strings.Index(addr, "://"); i >= 0 {
				addr = addr[i+3:]
			}
			host, _, _ := net.SplitHostPort(addr)
			return c.dial(nsByIP[host], addr)
		})},
	})
}

// writer puts a new key every 100 ms and records every write etcd acknowledged.
type writer struct{ *etcdcheck.Writer }

func (c *cluster) startWriter() *writer {
	return &writer{etcdcheck.Start(etcdcheck.PutThrough(c.etcdClient(c.nodes...)), 100*time.Millisecond, 2*time.Second)}
}

// waitWrites waits until n more writes were acknowledged: etcd is writable.
func (c *cluster) waitWrites(w *writer, what string) time.Duration {
	c.t.Helper()
	from := w.Count()
	return c.waitFor(what+": writes acknowledged", settle, func() (bool, string) {
		return w.Count() >= from+3, fmt.Sprintf("%d writes acknowledged", w.Count()-from)
	})
}

// stopAndCheck stops the writer; every acknowledged write must be on every node, and both
// members must end with the same revision and the same data.
func (c *cluster) stopAndCheck(w *writer) {
	c.t.Helper()
	w.Stop()
	c.waitSameData()
	for _, n := range c.nodes {
		c.checkAcked(w.Acked(), n)
	}
	c.t.Logf("%d acknowledged writes, all on both members", w.Count())
}

// waitSameData waits until both members report the same revision and the same hash of their
// data.
func (c *cluster) waitSameData() {
	c.t.Helper()
	type view struct {
		rev  int64
		hash uint32
	}
	c.waitFor("both members hold the same data and revision", settle, func() (bool, string) {
		views := map[string]view{}
		for _, n := range c.nodes {
			cli := c.etcdClient(n)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := cli.Maintenance.HashKV(ctx, c.etcdURL(n), 0)
			cancel()
			cli.Close()
			if err != nil {
				return false, fmt.Sprintf("%s: %v", n, err)
			}
			views[n] = view{resp.Header.Revision, resp.Hash}
		}
		return views["node1"] == views["node2"], fmt.Sprint(views)
	})
}

// checkAcked checks that node holds every acknowledged write in acked, and takes a new
// one.
func (c *cluster) checkAcked(acked []string, node string) {
	c.t.Helper()
	cli := c.etcdClient(node)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := etcdcheck.CheckAcked(ctx, cli, acked); err != nil {
		c.t.Fatalf("%s: %v", node, err)
	}
}

// missing counts the keys node's etcd does not hold.
func (c *cluster) missing(keys []string, node string) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := etcdcheck.Missing(ctx, c.etcdClient(node), keys)
	if err != nil {
		c.t.Fatalf("%s: %v", node, err)
	}
	return n
}
