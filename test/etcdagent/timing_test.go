//go:build integration

package etcdagent_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
)

// TestSlowerHardwareTimeouts: the cluster-etcd-operator's tuning for slower hardware
// (ETCD_HEARTBEAT_INTERVAL=500, ETCD_ELECTION_TIMEOUT=2500) in the environment etcd starts with,
// as the podman runtime passes the manifest's on and as etcd inherits the agent's with the exec
// runtime: etcd runs with it, the agent records it, and a leader a monitor sees proves the peer
// alive only two of those timeouts back (a leader can outlive its peer that long). A failover
// still forces a cluster of one on the notification.
func TestSlowerHardwareTimeouts(t *testing.T) {
	c := newCluster(t)
	for _, n := range c.nodes {
		n.environ = map[string]string{"ETCD_HEARTBEAT_INTERVAL": "500", "ETCD_ELECTION_TIMEOUT": "2500"}
	}
	leader, other := formCluster(t, c)
	for _, n := range []*node{leader, other} {
		log, err := os.ReadFile(n.params["log_file"])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), `"election-timeout":"2.5s"`) {
			t.Fatalf("%s: etcd did not start with the 2.5 s election timeout", n.name)
		}
		cfg := etcdnode.Config{StateDir: n.params["state_dir"]}
		if got := cfg.LeaderLease(); got != 5*time.Second {
			t.Fatalf("%s: lease %v, want 5s", n.name, got)
		}
		before := time.Now()
		n.must("monitor", ocfPromoted)
		st, err := os.Stat(cfg.LeaderSeenFile())
		if err != nil {
			t.Fatal(err)
		}
		if back := before.Sub(st.ModTime()); back < 4*time.Second || back > 6*time.Second {
			t.Fatalf("%s: leader seen %v before the monitor, want about 5s", n.name, back)
		}
	}
	leader.fence()
	other.notify("stop", leader.name)
	other.put("/k/after-fence", "y")
}
