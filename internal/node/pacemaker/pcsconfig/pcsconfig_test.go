package pcsconfig

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/golden"
)

func config() clusterconfig.Config {
	c := clusterconfig.Config{ClusterName: "tnf",
		Nodes: []clusterconfig.Node{
			{Name: "master-1", IP: "192.0.2.11", BMC: clusterconfig.BMC{Address: "redfish+https://192.0.2.201/redfish/v1/Systems/1",
				Username: "root", PasswordFile: "/etc/tnf/secrets/master-1.password", CertificateVerification: "Disabled",
				CertificateSHA256: strings.Repeat("AB:", 31) + "AB"}},
			{Name: "master-0", IP: "192.0.2.10", BMC: clusterconfig.BMC{Address: "redfish+https://[fd00::200]:8443/redfish/v1/Systems/System.Embedded.1",
				Username: "admin", PasswordFile: "/etc/tnf/secrets/master-0.password"}},
		}}
	c.Defaults()
	return c
}

// TestGolden: the default configuration and one with stand-ins, a longer token and etcd
// parameters (what the namespace test cluster uses).
func TestGolden(t *testing.T) {
	lab := config()
	lab.Token.Duration = 5000e6
	lab.FenceRaceWinner = "master-1"
	lab.Resources.Crio = clusterconfig.Agent{Agent: "ocf:heartbeat:anything", Params: map[string]string{"binfile": "/bin/sleep", "cmdline_options": "infinity"}}
	lab.Resources.Kubelet = clusterconfig.Agent{Agent: "ocf:heartbeat:Dummy"}
	lab.Resources.Etcd = map[string]string{"runtime": "exec", "data_dir": "/var/lib/etcd"}
	for name, c := range map[string]clusterconfig.Config{"default": config(), "stand-ins": lab} {
		conf, err := Corosync(c)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name+".corosync.conf", conf)
		cmds, err := Commands(c)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, c := range cmds {
			lines = append(lines, "pcs -f cib.xml "+strings.Join(c, " "))
		}
		golden.Check(t, name+".pcs", strings.Join(lines, "\n")+"\n")
	}
}

// TestNoPasswordInTheCIB: the commands name only the secret reference.
func TestNoPasswordInTheCIB(t *testing.T) {
	cmds, err := Commands(config())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cmds {
		for _, a := range c {
			if strings.HasPrefix(a, "password=") {
				n++
				if a != "password="+pcmk.SecretRef {
					t.Errorf("%q", a)
				}
			}
		}
	}
	if n != 4 { // two levels for each of two nodes
		t.Fatalf("%d password parameters, want 4", n)
	}
}

// TestRaceWinnersDeviceWaitsLonger: the level-2 device that fences the race winner waits
// longest; level 1 (the power-off proof) never waits; each node has level 1 then level 2.
func TestRaceWinnersDeviceWaitsLonger(t *testing.T) {
	for _, winner := range []string{"master-0", "master-1"} {
		c := config()
		c.FenceRaceWinner = winner
		cmds, err := Commands(c)
		if err != nil {
			t.Fatal(err)
		}
		var levels []string
		for _, cmd := range cmds {
			line := strings.Join(cmd, " ")
			switch {
			case len(cmd) > 3 && cmd[0] == "stonith" && cmd[1] == "level":
				levels = append(levels, strings.Join(cmd[3:], " "))
			case len(cmd) > 3 && cmd[0] == "stonith" && cmd[3] == "fence_tnf_poweroff":
				if strings.Contains(line, "pcmk_delay") {
					t.Errorf("winner %s: level 1 waits: %s", winner, line)
				}
			case len(cmd) > 3 && cmd[0] == "stonith":
				want := "pcmk_delay_base=0s"
				if cmd[2] == FenceDevice(winner) {
					want = "pcmk_delay_base=10s"
				}
				if !strings.Contains(line, want) {
					t.Errorf("winner %s: %s lacks %s", winner, line, want)
				}
			}
		}
		if got, want := strings.Join(levels, ", "), "1 master-0 fence-master-0-poweroff, 2 master-0 fence-master-0, "+
			"1 master-1 fence-master-1-poweroff, 2 master-1 fence-master-1"; got != want {
			t.Errorf("levels %q, want %q", got, want)
		}
	}
}

// TestEveryFencingPathChecksTheCertificate: whatever a BMC entry says about its certificate,
// every fence device the configuration renders is one of the layer's agents (fence_redfish
// checks neither a pin nor a CA of the BMC's own) and checks the certificate: with the pin when
// there is one, else verified (with the BMC's CA when there is one). ssl_insecure appears only
// where nothing can check the certificate and the administrator opted out by name; without the
// opt-out such an entry renders nothing. The same holds for each device's monitor, which runs
// the same agent with the same options.
func TestEveryFencingPathChecksTheCertificate(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, verification := range []string{"Enabled", "Disabled"} {
		for _, pinned := range []bool{false, true} {
			for _, withCA := range []bool{false, true} {
				for _, optOut := range []bool{false, true} {
					c := config()
					b := &c.Nodes[1].BMC // master-0
					b.CertificateVerification, b.CertificateSHA256, b.InsecureSkipCertificateCheck = verification, "", optOut
					if pinned {
						b.CertificateSHA256 = pin
					}
					if withCA {
						b.CAFile = clusterconfig.BMCCAFile("master-0")
					}
					name := fmt.Sprintf("verification %s, pinned %v, CA %v, opted out %v", verification, pinned, withCA, optOut)
					checked := pinned || (verification == "Enabled")
					cmds, err := Commands(c)
					switch {
					case withCA && verification == "Disabled":
						if err == nil || !strings.Contains(err.Error(), "nodes[1].bmc.caFile") {
							t.Errorf("%s: %v, want a refusal naming nodes[1].bmc.caFile", name, err)
						}
						continue
					case !checked && !optOut:
						if err == nil || !strings.Contains(err.Error(), "nodes[1].bmc: the BMC's certificate is neither verified nor pinned") {
							t.Errorf("%s: %v, want a refusal naming nodes[1].bmc", name, err)
						}
						continue
					case err != nil:
						t.Errorf("%s: %v", name, err)
						continue
					}
					devices := 0
					for _, cmd := range cmds {
						if len(cmd) < 4 || cmd[0] != "stonith" || cmd[1] != "create" {
							continue
						}
						line := strings.Join(cmd, " ")
						if cmd[3] != "fence_tnf_poweroff" && cmd[3] != "fence_tnf_redfish" {
							t.Errorf("%s: a device with another agent: %s", name, line)
						}
						if !strings.Contains(line, "pcmk_host_list=master-0 ") {
							continue
						}
						devices++
						var want []string
						switch {
						case pinned:
							want = []string{"ssl_fingerprint=" + pin}
						case withCA:
							want = []string{"ssl_ca_file=/etc/tnf/bmc-ca/master-0.pem"}
						case verification == "Disabled":
							want = []string{"ssl_insecure=1", "insecure_skip_certificate_check=1"}
						}
						var got []string
						for _, w := range cmd {
							if strings.HasPrefix(w, "ssl_") || strings.HasPrefix(w, "insecure_") || strings.HasPrefix(w, "unverified_") {
								got = append(got, w)
							}
						}
						if strings.Join(got, " ") != strings.Join(want, " ") {
							t.Errorf("%s: %s checks the certificate with %q, want %q", name, cmd[2], got, want)
						}
					}
					if devices != 2 {
						t.Errorf("%s: %d devices fence master-0, want 2", name, devices)
					}
				}
			}
		}
	}
}

func TestSecrets(t *testing.T) {
	got := Secrets(map[string]string{"master-0": "hunter2"})
	if len(got) != 4 {
		t.Fatalf("%d files, want a password and its signature for each of two devices", len(got))
	}
	for i, dev := range []string{"fence-master-0-poweroff", "fence-master-0"} {
		pw, sign := got[2*i], got[2*i+1]
		if pw.Device != dev || pw.Path != pcmk.SecretsDir+"/"+dev+"/password" || string(pw.Data) != "hunter2\n" ||
			sign.Path != pcmk.SecretsDir+"/"+dev+"/password.sign" || string(sign.Data) != "2ab96390c7dbe3439de74d0c9b0b1767\n" {
			t.Errorf("%s: %s %s", dev, pw.Path, sign.Path)
		}
	}
}

func TestBadValues(t *testing.T) {
	rows := []struct {
		edit func(*clusterconfig.Config)
		want string
	}{
		{func(c *clusterconfig.Config) { c.Resources.Crio.Agent = "crio" }, "resources.crio.agent"},
		{func(c *clusterconfig.Config) { c.Resources.Kubelet.Params = map[string]string{"x": "a b"} }, "resources.kubelet.params.x"},
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"node_ip_map": "x"} }, "resources.etcd.node_ip_map"},
		// A key is written before its value on the command's line: a newline in it starts another.
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"x\nresource delete etcd": "1"} }, "resources.etcd"},
		{func(c *clusterconfig.Config) { c.Resources.Crio.Params = map[string]string{"a=b": "1"} }, "resources.crio.params"},
		// A value the agent refuses would make Pacemaker stop etcd on both nodes.
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"liveness_timeout": "3s"} }, "resources.etcd: parameter liveness_timeout"},
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"backup_count": "101"} }, "resources.etcd: parameter backup_count"},
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"graceful_leave": "maybe"} }, "resources.etcd: parameter graceful_leave"},
		{func(c *clusterconfig.Config) { c.Resources.Etcd = map[string]string{"backups": "3"} }, "resources.etcd: parameter backups: the agent has no such parameter"},
		{func(c *clusterconfig.Config) { c.Nodes[0].BMC.Username = "ad min" }, "nodes[master-1].bmc (username)"},
		{func(c *clusterconfig.Config) {
			c.Nodes[0].BMC.Address = "redfish+http://192.0.2.1/redfish/v1/Systems/1"
		}, "nodes[0].bmc: the fence agents speak HTTPS only"},
	}
	for _, r := range rows {
		c := config()
		r.edit(&c)
		if _, err := Commands(c); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("error %v, want one naming %s", err, r.want)
		}
	}
}

// TestCorosyncKeys: each key CorosyncKeys gives is set to its value in the corosync.conf Corosync
// renders for the same configuration, in its section (totem, or the node's entry in order).
func TestCorosyncKeys(t *testing.T) {
	c := config()
	c.Token.Duration = 2500e6
	conf, err := Corosync(c)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := CorosyncKeys(c)
	if err != nil {
		t.Fatal(err)
	}
	// The file as cmap keys: section.key, a node's keys as nodelist.node.N.key.
	inFile := map[string]string{}
	var path []string
	nodes := 0
	for _, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, "{"):
			section := strings.TrimSpace(strings.TrimSuffix(line, "{"))
			if section == "node" {
				section = fmt.Sprintf("node.%d", nodes)
				nodes++
			}
			path = append(path, section)
		case line == "}":
			path = path[:len(path)-1]
		case strings.Contains(line, ":"):
			k, v, _ := strings.Cut(line, ":")
			inFile[strings.Join(append(slices.Clone(path), k), ".")] = strings.TrimSpace(v)
		}
	}
	if len(keys) != 2+3*len(c.Nodes) {
		t.Errorf("%d keys, want the cluster name, the token and three per node: %v", len(keys), keys)
	}
	for k, v := range keys {
		if inFile[k] != v {
			t.Errorf("%s: %q in corosync.conf, CorosyncKeys says %q", k, inFile[k], v)
		}
	}
}
