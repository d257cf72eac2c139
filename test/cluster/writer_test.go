//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
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

// newEtcdClient reaches the nodes' etcd from inside their network namespaces.
func (c *cluster) newEtcdClient(nodes ...string) (*clientv3.Client, error) {
	nsByIP := map[string]string{}
	var eps []string
	for _, n := range nodes {
		nsByIP[c.ip[n]] = c.layout.Nodes[n].NetNS
		eps = append(eps, "http://"+c.ip[n]+":"+etcdPort)
	}
	return clientv3.New(clientv3.Config{
		Endpoints: eps, DialTimeout: 2 * time.Second, Logger: zap.NewNop(),
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
type writer struct {
	cli    *clientv3.Client
	mu     sync.Mutex
	acked  []string
	next   int
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *cluster) startWriter() *writer {
	w := &writer{cli: c.etcdClient(c.nodes...), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			key := fmt.Sprintf("w/%06d", w.next)
			w.next++
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := w.cli.Put(pctx, key, "v")
			pcancel()
			if err == nil {
				w.mu.Lock()
				w.acked = append(w.acked, key)
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// waitWrites waits until n more writes were acknowledged: etcd is writable.
func (c *cluster) waitWrites(w *writer, what string) time.Duration {
	c.t.Helper()
	from := w.count()
	return c.waitFor(what+": etcd acknowledges writes", settle, func() (bool, string) {
		return w.count() >= from+3, fmt.Sprintf("%d writes acknowledged", w.count()-from)
	})
}

// stopAndCheck stops the writer; every acknowledged write must be on every node, and both
// members must end with the same revision and the same data.
func (c *cluster) stopAndCheck(w *writer) {
	c.t.Helper()
	w.cancel()
	<-w.done
	type view struct {
		rev  int64
		hash uint32
	}
	var last string
	c.waitFor("both members hold the same data and revision", settle, func() (bool, string) {
		views := map[string]view{}
		for _, n := range c.nodes {
			cli := c.etcdClient(n)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := cli.Maintenance.HashKV(ctx, "http://"+c.ip[n]+":"+etcdPort, 0)
			cancel()
			cli.Close()
			if err != nil {
				last = fmt.Sprintf("%s: %v", n, err)
				return false, last
			}
			views[n] = view{resp.Header.Revision, resp.Hash}
		}
		last = fmt.Sprint(views)
		return views["node1"] == views["node2"], last
	})
	for _, n := range c.nodes {
		c.checkAcked(w, n)
	}
	c.t.Logf("%d acknowledged writes, all on both members", len(w.acked))
}

// checkAcked checks that node holds every write the writer saw acknowledged, and takes a new
// one.
func (c *cluster) checkAcked(w *writer, node string) {
	c.t.Helper()
	cli := c.etcdClient(node)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "check/"+node, "v"); err != nil {
		c.t.Fatalf("%s: etcd does not take a write: %v", node, err)
	}
	resp, err := cli.Get(ctx, "w/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		c.t.Fatalf("%s: %v", node, err)
	}
	have := map[string]bool{}
	for _, kv := range resp.Kvs {
		have[string(kv.Key)] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	missing := 0
	for _, k := range w.acked {
		if !have[k] {
			missing++
		}
	}
	if missing > 0 {
		c.t.Fatalf("%s: %d of %d acknowledged writes are missing", node, missing, len(w.acked))
	}
}
