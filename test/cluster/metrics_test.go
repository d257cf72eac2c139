//go:build integration

package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/build/alerts"
)

const (
	metricsPort  = "9665" // tnfctl metrics (tnf-metrics.service)
	exporterPort = "9664" // ha_cluster_exporter's default
	promAddr     = bmcIP + ":9090"
)

// sharedMetrics are the ha_cluster_exporter metrics tnfctl metrics serves under the same names
// and labels.
var sharedMetrics = []string{
	"ha_cluster_pacemaker_nodes", "ha_cluster_pacemaker_resources", "ha_cluster_pacemaker_stonith_enabled",
	"ha_cluster_pacemaker_fail_count", "ha_cluster_pacemaker_migration_threshold",
	"ha_cluster_corosync_quorate", "ha_cluster_corosync_quorum_votes", "ha_cluster_corosync_member_votes",
	// Both 0 on a healthy cluster; the exporter's stays 0 when a link fails (README, Monitoring).
	"ha_cluster_corosync_ring_errors",
}

// TestMetrics: on a running cluster, tnfctl metrics and Debian's ha_cluster_exporter give the
// same series for the metrics they share; then a real Prometheus scrapes both nodes through the
// management network while node2 loses its power, and sees the fencing, the roles and the peer
// gone, node1's forced cluster counted and its alert firing.
func TestMetrics(t *testing.T) {
	t.Parallel()
	c := newCluster(t, nil)
	c.up()
	// A resource failure, so that the fail counts have something to agree on.
	c.signal("node2", c.standInPID("node2", "kubelet"), unix.SIGKILL)
	c.waitFor("node2's kubelet stand-in failed once", settle, func() (bool, string) {
		_, st, err := c.status("node1")
		if err != nil {
			return false, err.Error()
		}
		for _, h := range st.History {
			if h.Node == "node2" && h.Resource == "kubelet" && h.FailCount > 0 {
				return true, ""
			}
		}
		return false, "no fail count"
	})
	c.sameAsExporter("node1")
	c.scrapeFlood("node1")

	c.startPrometheus()
	c.waitQuery(`up{job="tnf"} == 1`, 2)
	c.waitQuery(`tnf_etcd_role{role="voter"} == 1`, 4) // two nodes, each seen from both
	c.waitQuery(`tnf_etcd_members{type="voter"} == 2`, 2)
	c.power("off", "node2")
	c.waitQuery(`up{instance="`+c.metricsAddr("node2")+`"} == 0`, 1)
	c.waitQuery(`tnf_fencing_events_total{instance="`+c.metricsAddr("node1")+`",target="node2",result="success"} >= 1`, 1)
	c.waitQuery(`tnf_etcd_role{instance="`+c.metricsAddr("node1")+`",node="node1",role="voter"} == 1`, 1)
	c.waitQuery(`tnf_etcd_role{instance="`+c.metricsAddr("node1")+`",node="node2",role="stopped"} == 1`, 1)
	c.waitQuery(`tnf_cluster_member{instance="`+c.metricsAddr("node1")+`",node="node2"} == 0`, 1)
	c.waitQuery(`ha_cluster_pacemaker_nodes{instance="`+c.metricsAddr("node1")+`",node="node2",status="online"} == 0`, 1)
	c.waitQuery(`ha_cluster_corosync_ring_errors{instance="`+c.metricsAddr("node1")+`"} == 1`, 1)
	c.waitQuery(`tnf_etcd_members{instance="`+c.metricsAddr("node1")+`",type="voter"} == 1`, 1)
	c.waitQuery(`tnf_etcd_forced_clusters_total{instance="`+c.metricsAddr("node1")+`",node="node1"} == 1`, 1)
	c.waitQuery(`tnf_last_failover_seconds{instance="`+c.metricsAddr("node1")+`",node="node1"} < 30`, 1)
	c.waitQuery(`tnf_setup_state{state="done"} == 1`, 1)
	// The layer's alerting rules, evaluated by the same Prometheus: the failover is reported.
	c.waitQuery(`ALERTS{alertname="TNFClusterForced",alertstate="firing",node="node1"}`, 1)
}

// scrapeFlood sends 100 scrapes at once to node's endpoint, from one address: those it serves
// share readings (at most one per sharing period, 5 s, and one at a time), the others are
// refused (a connection closed at accept past the 8 of one source, or 429 past 4 scrapes in
// flight), and etcd's monitor, which reads etcd's status meanwhile, never fails.
func (c *cluster) scrapeFlood(node string) {
	c.t.Helper()
	readings := func() float64 {
		families, err := c.scrape(c.metricsAddr(node))
		if err != nil || families["tnf_scrape_readings_total"] == nil {
			c.t.Fatalf("%s's tnf_scrape_readings_total: %v", node, err)
		}
		return families["tnf_scrape_readings_total"].GetMetric()[0].GetCounter().GetValue()
	}
	before := readings()
	// The last reading expires (5 s), so the flood has to take a new one.
	time.Sleep(5 * time.Second)
	began := time.Now()
	codes := make(chan int, 100) // 0: the connection closed without an answer
	for range 100 {
		go func() {
			resp, err := c.httpIn(c.bmcNS).Get("http://" + c.metricsAddr(node) + "/metrics")
			if err != nil {
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	answers := map[int]int{}
	for range 100 {
		answers[<-codes]++
	}
	took := time.Since(began)
	taken := readings() - before // this scrape falls within the flood's reading's 5 s
	c.t.Logf("100 scrapes at once of %s's metrics in %v: %v readings, answers %v", node, took.Round(time.Millisecond), taken, answers)
	if answers[http.StatusOK] == 0 || answers[http.StatusOK]+answers[http.StatusTooManyRequests]+answers[0] != 100 {
		c.t.Errorf("100 scrapes at once: answers %v, want some 200 and the others 429 or closed", answers)
	}
	if most := 1 + math.Floor(took.Seconds()/5); taken > most {
		c.t.Errorf("100 scrapes in %v took %v readings, want at most %v", took, taken, most)
	}
	_, st, err := c.status(node)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, h := range st.History {
		if h.Resource == "etcd" && h.FailCount > 0 {
			c.t.Errorf("etcd failed %d times on %s during the scrapes", h.FailCount, h.Node)
		}
	}
	c.waitRoles(node, bothPromoted)
}

// metricsAddr is node's metrics endpoint on the management network.
func (c *cluster) metricsAddr(node string) string {
	return strings.TrimSuffix(c.layout.Nodes[node].Addrs["mgmt"], "/24") + ":" + metricsPort
}

// httpIn is an HTTP client whose connections start inside network namespace ns.
func (c *cluster) httpIn(ns string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return c.dial(ns, addr) },
	}}
}

// scrape reads a metrics endpoint from the management network.
func (c *cluster) scrape(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := c.httpIn(c.bmcNS).Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s: %s", addr, resp.Status, body)
	}
	var p expfmt.TextParser
	return p.TextToMetricFamilies(resp.Body)
}

// series writes a family's series one per line, "name{label="value",...} value", sorted.
func series(f *dto.MetricFamily) []string {
	var out []string
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		sort.Strings(labels)
		v := m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
		out = append(out, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(labels, ","), v))
	}
	sort.Strings(out)
	return out
}

// sameAsExporter runs ha_cluster_exporter on node beside tnfctl metrics and compares the shared
// metrics' series, label sets and values, on a cluster that does not change meanwhile.
func (c *cluster) sameAsExporter(node string) {
	c.t.Helper()
	if err := c.layout.Nodes[node].daemon("ha-cluster-exporter", "ha_cluster_exporter", "--web.listen-address=:"+exporterPort); err != nil {
		c.t.Fatal(err)
	}
	exporter := strings.TrimSuffix(c.metricsAddr(node), metricsPort) + exporterPort
	var diff string
	c.waitFor("the same shared series from tnfctl metrics and ha_cluster_exporter", time.Minute, func() (bool, string) {
		theirs, err := c.scrape(exporter)
		if err != nil {
			return false, err.Error()
		}
		ours, err := c.scrape(c.metricsAddr(node))
		if err != nil {
			return false, err.Error()
		}
		diff = ""
		for _, name := range sharedMetrics {
			if theirs[name] == nil {
				diff += fmt.Sprintf("\nha_cluster_exporter serves no %s", name)
				continue
			}
			a, b := series(theirs[name]), series(ours[name])
			for _, s := range a {
				if !slices.Contains(b, s) {
					diff += "\nonly ha_cluster_exporter: " + s
				}
			}
			for _, s := range b {
				if !slices.Contains(a, s) {
					diff += "\nonly tnfctl metrics: " + s
				}
			}
		}
		return diff == "", diff
	})
}

// startPrometheus runs Debian's Prometheus on the management network, scraping both nodes'
// metrics endpoints and evaluating the layer's alerting rules every 2 seconds, until the test ends.
func (c *cluster) startPrometheus() {
	c.t.Helper()
	dir := filepath.Join(c.dir, "prometheus")
	rules, err := alerts.RuleFile()
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(filepath.Join(dir, "rules.yaml"), rules, 0o644)
	config := fmt.Sprintf(`global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files: [rules.yaml]
scrape_configs:
  - job_name: tnf
    static_configs:
      - targets: [%q, %q]
`, c.metricsAddr("node1"), c.metricsAddr("node2"))
	c.write(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", c.bmcNS, "prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait(); log.Close() }()
	c.t.Cleanup(func() {
		_ = unix.Kill(pid, unix.SIGKILL)
		waitGone(pid, 10*time.Second)
	})
}

// waitQuery waits until Prometheus answers query with n series.
func (c *cluster) waitQuery(query string, n int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("Prometheus: %d series for %s", n, query), settle, func() (bool, string) {
		resp, err := c.httpIn(c.bmcNS).Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(query))
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var answer struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Data   struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			return false, err.Error()
		}
		if answer.Status != "success" {
			return false, answer.Error
		}
		return len(answer.Data.Result) == n, fmt.Sprintf("%d series", len(answer.Data.Result))
	})
}

// assertMetric checks that node's metrics endpoint serves the series want, written as series
// writes it (labels sorted): `tnf_inert{node="node1"} 1`. Scrapes share a reading for 5 s
// (metrics.Shared), so a change may take that long to show.
func (c *cluster) assertMetric(node, want string) {
	c.t.Helper()
	name, _, _ := strings.Cut(want, "{")
	c.waitFor(fmt.Sprintf("%s's metrics serve %s", node, want), 15*time.Second, func() (bool, string) {
		families, err := c.scrape(c.metricsAddr(node))
		if err != nil {
			return false, err.Error()
		}
		got := series(families[name])
		return slices.Contains(got, want), strings.Join(got, "\n")
	})
}
