package clusterconfig

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/test/testca"
)

func write(t *testing.T, dir, name, body string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodTNF = `clusterName: lab
nodes:
- name: node2
  ip: 192.168.122.12
  bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/2", username: admin, passwordFile: pw2}
- name: node1
  ip: 192.168.122.11
  bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/1", username: admin, passwordFile: pw1}
`

// TestInsecureSkipCertificateCheck: the opt-out, by its name or by the name it had before the
// second fencing level checked certificates, lets an unchecked BMC through; a node
// configuration written by build-layer carries only the new name.
func TestInsecureSkipCertificateCheck(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one")
	write(t, dir, "pw2", "two")
	for _, name := range []string{"insecureSkipCertificateCheck", "unverifiedPowerOffProof"} {
		in, err := LoadTNF(write(t, dir, "tnf.yaml", strings.Replace(goodTNF, "passwordFile: pw1}", "passwordFile: pw1, certificateVerification: Disabled, "+name+": true}", 1)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		yml, err := in.Config.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if b := in.Config.Nodes[1].BMC; !b.InsecureSkipCertificateCheck || strings.Contains(string(yml), "unverifiedPowerOffProof") {
			t.Errorf("%s: %+v\n%s", name, b, yml)
		}
	}
}

func TestLoadTNF(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one\n")
	write(t, dir, "pw2", "two")
	in, err := LoadTNF(write(t, dir, "tnf.yaml", goodTNF))
	if err != nil {
		t.Fatal(err)
	}
	c := in.Config
	if c.Nodes[1].Name != "node1" || c.FenceRaceWinner != "node1" || c.FenceDelay.Winner.Duration != 0 || c.FenceDelay.Other.Duration != 0 {
		t.Fatalf("%+v", c)
	}
	if c.Nodes[1].BMC.PasswordFile != "/etc/tnf/secrets/node1.password" || c.Nodes[1].BMC.CertificateVerification != "Enabled" {
		t.Fatalf("%+v", c.Nodes[1].BMC)
	}
	secrets := map[string]string{}
	for _, s := range in.Secrets {
		secrets[s.Path] = string(s.Data)
	}
	if secrets["/etc/tnf/secrets/node1.password"] != "one" || secrets["/etc/tnf/secrets/node2.password"] != "two" {
		t.Fatalf("secrets: %v", secrets)
	}
	if len(in.Files) != 0 || c.EtcdPodManifestFile != "" {
		t.Fatalf("a pod manifest without etcdPodManifestFile: %v", in.Files)
	}
	out, _ := c.Marshal()
	if strings.Index(string(out), "name: node1") > strings.Index(string(out), "name: node2") {
		t.Fatalf("cluster.yaml nodes not sorted:\n%s", out)
	}
}

const etcdPod = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcdctl\n    image: a\n  - name: etcd\n    image: localhost/tnf/etcd:v1\n"

// TestEtcdPodManifest: a shipped manifest goes where the agent reads it, and cluster.yaml names
// that path.
func TestEtcdPodManifest(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one")
	write(t, dir, "pw2", "two")
	write(t, dir, "etcd-pod.yaml", etcdPod)
	in, err := LoadTNF(write(t, dir, "tnf.yaml", goodTNF+"etcdPodManifestFile: etcd-pod.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Files) != 1 || in.Files[0].Path != EtcdPodManifest || string(in.Files[0].Data) != etcdPod {
		t.Fatalf("files: %+v", in.Files)
	}
	if in.Config.EtcdPodManifestFile != EtcdPodManifest {
		t.Fatalf("cluster.yaml: etcdPodManifestFile %q", in.Config.EtcdPodManifestFile)
	}
	out, _ := in.Config.Marshal()
	p := write(t, dir, "cluster.yaml", string(out))
	if _, err := Load(p); err != nil {
		t.Fatal(err)
	}
	p = write(t, dir, "cluster.yaml", strings.Replace(string(out), EtcdPodManifest, "/etc/etcd.yaml", 1))
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "etcdPodManifestFile") {
		t.Errorf("cluster.yaml naming another manifest path: %v", err)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one")
	write(t, dir, "pw2", "two")
	write(t, dir, "empty", "\n")
	write(t, dir, "no-etcd.yaml", strings.Replace(etcdPod, "name: etcd\n", "name: etcd-2\n", 1))
	write(t, dir, "no-image.yaml", strings.Replace(etcdPod, "image: localhost/tnf/etcd:v1", "image: ''", 1))
	write(t, dir, "deployment.yaml", strings.Replace(etcdPod, "kind: Pod", "kind: Deployment", 1))
	ca, err := testca.New("BMC vendor CA")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "ca.pem", string(ca.PEM()))
	tnfRows := []struct{ old, new, want string }{
		{"clusterName: lab", "clusterName: lab\ncolour: red", `unknown field "colour"`},
		// A BMC whose certificate nothing checks gets no fencing path; nor does a CA that would
		// verify nothing.
		{"passwordFile: pw1}", "passwordFile: pw1, certificateVerification: Disabled}", "nodes[1].bmc: the BMC's certificate is neither verified nor pinned"},
		{"passwordFile: pw1}", "passwordFile: pw1, certificateVerification: Disabled, caFile: ca.pem}", "nodes[1].bmc.caFile: a CA verifies"},
		{"clusterName: lab", "clusterName: ''", "clusterName"},
		{"ip: 192.168.122.12", "ip: nowhere", "nodes[0].ip"},
		{"ip: 192.168.122.11", "ip: nowhere", "nodes[1].ip"},
		{"name: node2", "name: node1", "nodes[1].name"},
		// Names end up in corosync.conf and in pcs command lines, one per line.
		{"name: node2", "name: \"node2\\nresource delete etcd\"", "nodes[0].name"},
		{"name: node2", "name: \"node2\\tx\"", "nodes[0].name"},
		{"name: node2", "name: Node_2", "nodes[0].name"},
		// A node name fit for a Node but too long for the API objects named after it.
		{"name: node2", "name: " + strings.Repeat(strings.Repeat("n", 60)+".", 3) + strings.Repeat("n", 55), "nodes[0].name: \"nnn"},
		{"clusterName: lab", "clusterName: \"lab\\ntotem {\"", "clusterName"},
		{"clusterName: lab", "clusterName: lab.example.com", "clusterName"},
		{`"redfish+https://10.0.2.2:8443/redfish/v1/Systems/2"`, `"https://10.0.2.2/redfish/v1/Systems/2"`, "nodes[0].bmc.address"},
		{"passwordFile: pw2", "passwordFile: missing", "nodes[0].bmc.passwordFile"},
		{"username: admin, passwordFile: pw1", "passwordFile: pw1", "nodes[1].bmc.username"},
		{"clusterName: lab", "clusterName: lab\nfenceRaceWinner: node3", "fenceRaceWinner"},
		{"clusterName: lab", "clusterName: lab\nfenceDelay: {winner: 1s, other: 5s}", "fenceDelay.winner"},
		// Addresses a peer cannot reach, or that the two nodes share.
		{"ip: 192.168.122.12", "ip: 127.0.0.1", "nodes[0].ip"},
		{"ip: 192.168.122.12", "ip: 0.0.0.0", "nodes[0].ip"},
		{"ip: 192.168.122.12", "ip: 224.0.0.1", "nodes[0].ip"},
		{"ip: 192.168.122.12", "ip: 169.254.0.2", "nodes[0].ip"},
		{"ip: 192.168.122.12", "ip: \"fe80::1%eth0\"", "nodes[0].ip"},
		{"ip: 192.168.122.11", "ip: 192.168.122.12", "nodes[1].ip"},
		{"ip: 192.168.122.11", "ip: \"fd00::11\"", "nodes[1].ip"},
		// Both nodes' BMC entries naming one system: the first fencing powers off the survivor.
		{"Systems/1\"", "Systems/2\"", "nodes[1].bmc.address"},
		// Durations a site does not mean.
		{"clusterName: lab", "clusterName: lab\ntoken: -3s", "token"},
		{"clusterName: lab", "clusterName: lab\ntoken: 100ms", "token"},
		{"clusterName: lab", "clusterName: lab\ntoken: 10m", "token"},
		{"clusterName: lab", "clusterName: lab\nfenceDelay: {winner: 10m}", "fenceDelay.winner"},
		{"clusterName: lab", "clusterName: lab\nfenceDelay: {other: -1s}", "fenceDelay.other"},
		{"clusterName: lab", "clusterName: lab\nfenceDelay: {other: 12s}", "fenceDelay.other: 12s is not shorter"},
		{"clusterName: lab", "clusterName: lab\nautoUnblock: {enabled: true, after: -1m}", "autoUnblock.after"},
		{"clusterName: lab", "clusterName: lab\nautoUnblock: {enabled: true, after: 720h}", "autoUnblock.after"},
		{"clusterName: lab", "clusterName: lab\noutOfService: {kubeconfigFile: kubeconfig}", "outOfService.kubeconfigFile"},
		{"clusterName: lab", "clusterName: lab\noutOfService: {kubeconfigFile: /etc/../kubeconfig}", "outOfService.kubeconfigFile"},
		{"clusterName: lab", "clusterName: lab\nsecretsFromAPI: {kubeconfigFile: node.kubeconfig}", "secretsFromAPI.kubeconfigFile"},
		// Where the confined services that read them see nothing.
		{"clusterName: lab", "clusterName: lab\nsecretsFromAPI: {kubeconfigFile: /root/node.kubeconfig}", "secretsFromAPI.kubeconfigFile: \"/root/node.kubeconfig\" is under /root"},
		{"clusterName: lab", "clusterName: lab\noutOfService: {kubeconfigFile: /home/admin/taint.kubeconfig}", "outOfService.kubeconfigFile: \"/home/admin/taint.kubeconfig\" is under /home"},
		// A certificate pin that is no SHA-256, or on a BMC without TLS.
		{"username: admin, passwordFile: pw2", "username: admin, passwordFile: pw2, certificateSHA256: abc", "nodes[0].bmc.certificateSHA256"},
		{`"redfish+https://10.0.2.2:8443/redfish/v1/Systems/2", username: admin, passwordFile: pw2`,
			`"redfish+http://10.0.2.2:8443/redfish/v1/Systems/2", username: admin, passwordFile: pw2, certificateSHA256: "` + strings.Repeat("ab", 32) + `"`, "nodes[0].bmc.certificateSHA256"},
		// A CA file that holds no certificate, or a node's pointing elsewhere.
		{"username: admin, passwordFile: pw2", "username: admin, passwordFile: pw2, caFile: pw2", "nodes[0].bmc.caFile"},
		{"username: admin, passwordFile: pw2", "username: admin, passwordFile: pw2, caFile: missing.pem", "nodes[0].bmc.caFile"},
		// A password file with nothing in it.
		{"passwordFile: pw2", "passwordFile: empty", "nodes[0].bmc.passwordFile"},
		{"clusterName: lab", "clusterName: lab\netcdPodManifestFile: missing.yaml", "etcdPodManifestFile"},
		{"clusterName: lab", "clusterName: lab\netcdPodManifestFile: no-etcd.yaml", "no container named etcd"},
		{"clusterName: lab", "clusterName: lab\netcdPodManifestFile: no-image.yaml", "spec.containers[1].image"},
		{"clusterName: lab", "clusterName: lab\netcdPodManifestFile: deployment.yaml", "kind"},
	}
	for _, r := range tnfRows {
		p := write(t, dir, "tnf.yaml", strings.Replace(goodTNF, r.old, r.new, 1))
		if _, err := LoadTNF(p); err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("tnf.yaml %q: error %v, want one naming the file and %s", r.new, err, r.want)
		}
	}
	ips := map[string]string{"m0": "192.0.2.10", "m1": "192.0.2.11", "m2": "192.0.2.12"}
	cred := func(host string) string {
		return "    - {hostName: " + host + ", address: \"redfish+https://192.0.2.20/redfish/v1/Systems/1\", username: admin, password: pw}\n"
	}
	icRows := []struct{ body, want string }{
		{"metadata: {name: x}\ncontrolPlane: {name: master}\n", "controlPlane.fencing.credentials: missing"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + cred("m1") + cred("m2"), "exactly two are needed, found 3"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + cred("m9"), "credentials[1].hostName"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + strings.Replace(cred("m1"), "password: pw", "password: ''", 1), "credentials[1].password"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + strings.Replace(cred("m1"), "redfish+https", "ipmi", 1), "nodes[1].bmc.address"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + strings.Replace(strings.Replace(cred("m1"), "192.0.2.20/", "192.0.2.21/", 1), "password: pw", "password: pw, certificateVerification: Disabled", 1),
			"nodes[1].bmc: the BMC's certificate is neither verified nor pinned"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + strings.Replace(strings.Replace(cred("m1"), "192.0.2.20/", "192.0.2.21/", 1), "password: pw", "password: pw, certificateVerification: Disabled", 1),
			"give it as --bmc-certificate-sha256 NAME=SHA256"},
		{"metadata: {name: x}\ncontrolPlane:\n  fencing:\n    credentials:\n" + cred("m0") + strings.Replace(cred("m1"), "192.0.2.20/", "192.0.2.21/", 1) + "# m2: a pin for a host not listed\n",
			"a BMC certificate pin for \"m2\""},
	}
	pins := map[string]string{}
	for _, r := range icRows {
		p := write(t, dir, "install-config.yaml", r.body)
		if strings.Contains(r.body, "# m2") {
			pins = map[string]string{"m2": strings.Repeat("ab", 32)}
		}
		if _, err := LoadInstallConfig(p, ips, pins); err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("install-config: error %v, want one naming the file and %q", err, r.want)
		}
	}
}

// TestPasswordFileInSecretsDir: cluster.yaml names each password file directly in SecretsDir,
// in its clean form: a path that leaves the folder after cleaning is refused.
func TestPasswordFileInSecretsDir(t *testing.T) {
	in, err := LoadTNF(func() string {
		dir := t.TempDir()
		write(t, dir, "pw1", "one")
		write(t, dir, "pw2", "two")
		return write(t, dir, "tnf.yaml", goodTNF)
	}())
	if err != nil {
		t.Fatal(err)
	}
	for path, ok := range map[string]bool{
		SecretsDir + "/node2.password":     true,
		SecretsDir + "/../../shadow":       false,
		SecretsDir + "/./node2.password":   false,
		SecretsDir + "/sub/node2.password": false,
		"/etc/tnf/secretsX/node2.password": false,
		SecretsDir + "/":                   false,
	} {
		c := in.Config
		c.Nodes = append([]Node(nil), c.Nodes...)
		c.Nodes[0].BMC.PasswordFile = path
		if err := c.Validate(); (err == nil) != ok {
			t.Errorf("%q: %v", path, err)
		} else if err != nil && !strings.Contains(err.Error(), "nodes[0].bmc.passwordFile") {
			t.Errorf("%q: %v does not name the field", path, err)
		}
	}
}

// TestBMCCAFile: a BMC's CA bundle named in tnf.yaml reaches the nodes as a trust anchor (where
// fence_redfish finds it too) and cluster.yaml names it there; cluster.yaml naming another
// place is refused.
func TestBMCCAFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one")
	write(t, dir, "pw2", "two")
	ca, err := testca.New("BMC vendor CA")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "bmc-ca.pem", string(ca.PEM()))
	p := write(t, dir, "tnf.yaml", strings.Replace(goodTNF, "passwordFile: pw1}", "passwordFile: pw1, caFile: bmc-ca.pem}", 1))
	in, err := LoadTNF(p)
	if err != nil {
		t.Fatal(err)
	}
	n := in.Config.Nodes[1]
	if n.Name != "node1" || n.BMC.CAFile != BMCCAFile("node1") {
		t.Fatalf("node %s: caFile %q", n.Name, n.BMC.CAFile)
	}
	found := false
	for _, f := range in.Files {
		found = found || (f.Path == BMCCAFile("node1") && string(f.Data) == string(ca.PEM()))
	}
	if !found {
		t.Fatalf("the CA file is not among the files the nodes get: %v", in.Files)
	}
	if cred, err := n.CredentialWith("x"); err != nil || cred.CAFile != BMCCAFile("node1") {
		t.Fatalf("credential: %+v, %v", cred, err)
	}
	c := in.Config
	c.Nodes[1].BMC.CAFile = "/tmp/ca.pem"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "nodes[1].bmc.caFile") {
		t.Fatalf("a CA file elsewhere: %v", err)
	}
}

// TestReuseAuthkey: a generated Corosync key gives way to the one an earlier render gave the
// cluster; a key from corosyncAuthkeyFile stays; a key Corosync would refuse is an error.
func TestReuseAuthkey(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw1", "one")
	write(t, dir, "pw2", "two")
	in, err := LoadTNF(write(t, dir, "tnf.yaml", goodTNF))
	if err != nil {
		t.Fatal(err)
	}
	earlier := bytes.Repeat([]byte{7}, 256)
	if !in.AuthkeyGenerated {
		t.Fatal("no corosyncAuthkeyFile, yet the key is not marked generated")
	}
	if err := in.ReuseAuthkey(earlier[:10]); err == nil {
		t.Error("a 10-byte key was taken")
	}
	if err := in.ReuseAuthkey(earlier); err != nil {
		t.Fatal(err)
	}
	if got := secretAt(in, AuthkeyFile); got != base64.StdEncoding.EncodeToString(earlier)+"\n" {
		t.Errorf("key after reuse: %q", got)
	}
	given := bytes.Repeat([]byte{9}, 256)
	write(t, dir, "authkey", string(given))
	in, err = LoadTNF(write(t, dir, "tnf.yaml", goodTNF+"corosyncAuthkeyFile: authkey\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.ReuseAuthkey(earlier); err != nil || secretAt(in, AuthkeyFile) != base64.StdEncoding.EncodeToString(given)+"\n" {
		t.Errorf("a given key was replaced (%v)", err)
	}
}

func secretAt(in Input, path string) string {
	for _, s := range in.Secrets {
		if s.Path == path {
			return string(s.Data)
		}
	}
	return ""
}

// TestSizedWinner: the race winner's delay outlasts the winner's way to the loser's power-off
// (the other delay, the first level's read timeout, two answers of the slowest BMC, the margin),
// in whole seconds, at most 45 s.
func TestSizedWinner(t *testing.T) {
	const read = 3 * time.Second
	for _, tc := range []struct {
		other, latency, want time.Duration
	}{
		{0, 50 * time.Millisecond, 7 * time.Second},
		{0, 0, 6 * time.Second},
		{0, 500 * time.Millisecond, 7 * time.Second},
		{0, 501 * time.Millisecond, 8 * time.Second},
		{0, 3 * time.Second, 12 * time.Second},
		{0, 3150 * time.Millisecond, 13 * time.Second},
		{time.Second, 50 * time.Millisecond, 8 * time.Second},
		{0, 20 * time.Second, 45 * time.Second},
	} {
		if got := SizedWinner(tc.other, tc.latency, read); got != tc.want {
			t.Errorf("other %v, latency %v: %v, want %v", tc.other, tc.latency, got, tc.want)
		}
	}
}

// TestPasswordFilesOfTheirOwn: a password file another secret of the node already names (the
// other node's, a kubeconfig, the Corosync key) is refused: the secrets' sync would
// write one over the other.
func TestPasswordFilesOfTheirOwn(t *testing.T) {
	base := Config{ClusterName: "lab", CorosyncAuthkeyFile: AuthkeyFile, Nodes: []Node{
		{Name: "node1", IP: "192.0.2.11", BMC: BMC{Address: "redfish+https://192.0.2.1/redfish/v1/Systems/1", Username: "a", PasswordFile: SecretsDir + "/node1.password"}},
		{Name: "node2", IP: "192.0.2.12", BMC: BMC{Address: "redfish+https://192.0.2.1/redfish/v1/Systems/2", Username: "a", PasswordFile: SecretsDir + "/node2.password"}},
	}}
	for _, tc := range []struct {
		file, want string
	}{
		{SecretsDir + "/node2.password", "nodes[1].bmc.passwordFile too"},
		{NodeKubeconfig, "the node's kubeconfig"},
		{AuthkeyFile, "the Corosync key"},
		{MetricsTLSKeyFile, "the metrics key"},
		{SecretsDir + "/api.kubeconfig", "secretsFromAPI.kubeconfigFile"},
		{SecretsDir + "/taint.kubeconfig", "outOfService.kubeconfigFile"},
	} {
		c := base
		c.Nodes = append([]Node(nil), base.Nodes...)
		c.SecretsFromAPI = &SecretsFromAPI{KubeconfigFile: SecretsDir + "/api.kubeconfig"}
		c.OutOfService.KubeconfigFile = SecretsDir + "/taint.kubeconfig"
		c.Nodes[0].BMC.PasswordFile = tc.file
		c.Defaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "nodes[0].bmc.passwordFile: "+tc.file+" is "+strings.TrimSuffix(tc.want, " too")) {
			t.Errorf("%s: %v, want a refusal naming %s", tc.file, err, tc.want)
		}
	}
	c := base
	c.Defaults()
	if err := c.Validate(); err != nil {
		t.Errorf("files of their own: %v", err)
	}
}

// TestOutOfServiceCredential: the taint's credential defaults to the node's own, which the
// layer's manifests scope, where the node has one; to localhost.kubeconfig (system:masters)
// only where it has none; an administrator's choice stands, and a command's --kubeconfig
// (UseKubeconfig) stands over both, for the Secrets too.
func TestOutOfServiceCredential(t *testing.T) {
	const admin = "/root/admin.kubeconfig"
	for _, tc := range []struct {
		name        string
		fromAPI     *SecretsFromAPI
		given, flag string
		want        string
		wantSecrets string // the Secrets' credential; "" where they come with the MachineConfig
	}{
		{"secrets from the API", &SecretsFromAPI{}, "", "", NodeKubeconfig, NodeKubeconfig},
		{"secrets from the API, another kubeconfig", &SecretsFromAPI{KubeconfigFile: SecretsDir + "/api.kubeconfig"}, "", "", SecretsDir + "/api.kubeconfig", SecretsDir + "/api.kubeconfig"},
		{"secrets in the MachineConfig", nil, "", "", LocalhostKubeconfig, ""},
		{"the administrator's", &SecretsFromAPI{}, "/etc/tnf/secrets/taint.kubeconfig", "", "/etc/tnf/secrets/taint.kubeconfig", NodeKubeconfig},
		{"--kubeconfig", &SecretsFromAPI{}, "", admin, admin, admin},
		{"--kubeconfig over the administrator's", &SecretsFromAPI{}, "/etc/tnf/secrets/taint.kubeconfig", admin, admin, admin},
		{"--kubeconfig, secrets in the MachineConfig", nil, "", admin, admin, ""},
	} {
		c := Config{SecretsFromAPI: tc.fromAPI, OutOfService: OutOfService{KubeconfigFile: tc.given}}
		c.Defaults()
		if tc.flag != "" {
			c.UseKubeconfig(tc.flag)
		}
		if got := c.OutOfServiceKubeconfig(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		secrets := ""
		if c.SecretsFromAPI != nil {
			secrets = c.SecretsFromAPI.KubeconfigFile
		}
		if secrets != tc.wantSecrets {
			t.Errorf("%s: the Secrets' credential %q, want %q", tc.name, secrets, tc.wantSecrets)
		}
	}
}

// TestPasswordsPacemakerReads: a password file whose content Pacemaker would not read back whole
// is refused where the node configuration is built, naming the field and the file.
func TestPasswordsPacemakerReads(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pw2", "two")
	for content, want := range map[string]string{
		"one \n":                        "ends in white space",
		"one\ntwo\n":                    "line break",
		strings.Repeat("x", 255) + "\n": "255 bytes",
	} {
		write(t, dir, "pw1", content)
		p := write(t, dir, "tnf.yaml", goodTNF)
		if _, err := LoadTNF(p); err == nil || !strings.Contains(err.Error(), "nodes[1].bmc.passwordFile: pw1: the password") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}
