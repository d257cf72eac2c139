package pcsconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// FuzzNodeConfig: whatever cluster.yaml holds, it is read or refused without a panic, and a
// configuration that is read and whose fencing is accepted renders a corosync.conf with exactly its two nodes and its cluster
// name on one line, and pcs commands without a line break in any word: no value of the file
// can add a line to corosync.conf or a command to the cluster configuration.
func FuzzNodeConfig(f *testing.F) {
	f.Add([]byte(`clusterName: lab
corosyncAuthkeyFile: /etc/tnf/secrets/corosync-authkey
nodes:
- {name: node1, ip: 192.0.2.11, bmc: {address: "redfish+https://192.0.2.1/redfish/v1/Systems/1", username: admin, passwordFile: /etc/tnf/secrets/node1.password}}
- {name: node2, ip: 192.0.2.12, bmc: {address: "redfish+https://192.0.2.1/redfish/v1/Systems/2", username: admin, passwordFile: /etc/tnf/secrets/node2.password}}
`))
	f.Add([]byte("clusterName: \"lab\\ntotem {\"\nnodes: []\n"))
	f.Add([]byte("clusterName: lab\nnodes:\n- {name: \"node1\\nnode {\", ip: 192.0.2.11}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "cluster.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := clusterconfig.Load(path)
		if err != nil {
			if t.Name() == "FuzzNodeConfig/seed#0" {
				t.Fatalf("the good seed is refused: %v", err)
			}
			return
		}
		if err := c.ValidateFencing(); err != nil {
			if _, cmdErr := Commands(c); cmdErr == nil {
				t.Fatalf("fence devices rendered for a configuration whose fencing is refused (%v)", err)
			}
			return
		}
		conf, err := Corosync(c)
		if err != nil {
			t.Fatalf("a configuration that was read does not render: %v", err)
		}
		if n := strings.Count(conf, "    node {\n"); n != 2 {
			t.Fatalf("corosync.conf with %d node blocks:\n%s", n, conf)
		}
		if !strings.Contains(conf, "\n    cluster_name: "+c.ClusterName+"\n") || strings.ContainsAny(c.ClusterName, "\n\r{}") {
			t.Fatalf("cluster name %q in corosync.conf:\n%s", c.ClusterName, conf)
		}
		cmds, err := Commands(c)
		if err != nil {
			t.Fatalf("a configuration that was read has no commands: %v", err)
		}
		for _, cmd := range cmds {
			for _, w := range cmd {
				if strings.ContainsAny(w, "\n\r") {
					t.Fatalf("a line break in a pcs command: %q", cmd)
				}
			}
		}
	})
}
