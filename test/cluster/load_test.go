//go:build integration

package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/test/logline"
)

// loadResult is what a load run measured.
type loadResult struct {
	writes    int64
	duration  time.Duration
	status    []time.Duration // the monitor's status read, both nodes, every 100 ms
	failovers int             // etcd processes replaced, failed actions, fencings
	why       []string
}

func (r loadResult) percentile(p float64) time.Duration {
	s := slices.Sorted(slices.Values(r.status))
	return s[int(p*float64(len(s)-1))]
}

// load writes as fast as loadClients concurrent clients per node can, through both members,
// for d, while it reads each member's status the way the fast monitor does (etcd's JSON gateway,
// from inside the node's network) every 100 ms; then it counts what would be a false failover:
// an etcd process replaced, a failed action in Pacemaker, a fencing, a frozen or exited etcd in
// the agent's log.
func (c *cluster) load(d time.Duration) loadResult {
	c.t.Helper()
	const loadClients = 32
	pids := map[string][]int{}
	for _, n := range c.nodes {
		pids[n] = c.etcdPIDs(n)
	}
	logsFrom := c.agentLogSizes()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var r loadResult
	var writes atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	value := strings.Repeat("v", 256)
	for _, n := range c.nodes {
		cli := c.etcdClient(n)
		for g := range loadClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
					if _, err := cli.Put(pctx, fmt.Sprintf("load/%s/%d/%d", n, g, i%64), value); err == nil {
						writes.Add(1)
					}
					pcancel()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := c.layout.Nodes[n].NetNS
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
				DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return c.dial(ns, addr) },
			}}
			for ctx.Err() == nil {
				start := time.Now()
				resp, err := client.Post("http://"+c.ip[n]+":"+etcdPort+"/v3/maintenance/status", "application/json", bytes.NewReader([]byte("{}")))
				if err == nil {
					resp.Body.Close()
					mu.Lock()
					r.status = append(r.status, time.Since(start))
					mu.Unlock()
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	r.writes, r.duration = writes.Load(), time.Since(began)
	for _, n := range c.nodes {
		if now := c.etcdPIDs(n); !slices.Equal(now, pids[n]) {
			r.failovers++
			r.why = append(r.why, fmt.Sprintf("%s's etcd %v became %v", n, pids[n], now))
		}
	}
	_, st, err := c.status("node1")
	if err != nil {
		c.t.Fatal(err)
	}
	for _, res := range st.Resources {
		if res.Failed {
			r.failovers++
			r.why = append(r.why, fmt.Sprintf("%s failed on %s", res.ID, res.Node))
		}
	}
	if f := len(st.Fencing); f > 0 {
		r.failovers += f
		r.why = append(r.why, fmt.Sprintf("%d fencings", f))
	}
	if lines := logline.Grep(c.agentLogsSince(logsFrom), "frozen", "etcd exited"); lines != "" {
		r.failovers++
		r.why = append(r.why, lines)
	}
	return r
}

// loadDuration is TNF_LOAD_DURATION (a Go duration), 3 minutes by default.
func loadDuration(t testing.TB) time.Duration {
	v := os.Getenv("TNF_LOAD_DURATION")
	if v == "" {
		return 3 * time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("TNF_LOAD_DURATION=%q: want a positive duration", v)
	}
	return d
}

// TestMonitorUnderLoad: a heavy write load through both members for minutes (TNF_LOAD_DURATION)
// makes no monitor take a loaded member for a frozen or dead one: no etcd restarted, no failed
// action, nobody fenced.
func TestMonitorUnderLoad(t *testing.T) {
	onlyInClusterTest(t)
	c := newCluster(t, nil)
	c.up()
	r := c.load(loadDuration(t))
	t.Logf("%d writes in %v (%.0f/s); status read p50 %v, p99 %v, max %v over %d reads", r.writes, r.duration.Round(time.Second),
		float64(r.writes)/r.duration.Seconds(), r.percentile(0.5), r.percentile(0.99), r.percentile(1), len(r.status))
	if r.failovers > 0 {
		t.Fatalf("%d false failovers under load:\n%s", r.failovers, strings.Join(r.why, "\n"))
	}
}

// BenchmarkLoad: the same load; writes per second, the status read's p99 and max (what
// liveness_timeout must stay far above), and the false failovers (target 0).
func BenchmarkLoad(b *testing.B) {
	c := newCluster(b, nil)
	c.up()
	r := c.load(loadDuration(b))
	for _, why := range r.why {
		b.Log(why)
	}
	b.ReportMetric(float64(r.writes)/r.duration.Seconds(), "writes/s")
	b.ReportMetric(r.percentile(0.99).Seconds()*1000, "status-p99-ms")
	b.ReportMetric(r.percentile(1).Seconds()*1000, "status-max-ms")
	b.ReportMetric(float64(r.failovers), "false-failovers")
}
