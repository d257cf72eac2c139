// Package clusterconfig is the two-node cluster's node configuration: /etc/tnf/cluster.yaml on
// the nodes (written by a MachineConfig, read by tnfctl) and its secrets under /etc/tnf/secrets.
// It is built from the project's own tnf.yaml or from an install-config's fencing credentials.
package clusterconfig

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
)

// Paths on the nodes.
const (
	Path        = "/etc/tnf/cluster.yaml"
	SecretsDir  = "/etc/tnf/secrets"
	AuthkeyFile = SecretsDir + "/corosync-authkey"
	// NodeKubeconfig is the node's credential for its Secrets (SecretsFromAPI's default).
	NodeKubeconfig = SecretsDir + "/node.kubeconfig"
)

// SecretsNamespace holds the Secrets the nodes read: the installer's fencing credentials live
// there (cluster-etcd-operator, pkg/tnf/pkg/tools/secrets.go).
const SecretsNamespace = "openshift-etcd"

// NodeServiceAccount, in SecretsNamespace, is the identity of a node's credential
// (NodeKubeconfig): one per node, so that each may renew only its own token and taint only its
// peer, and one node's credential is revoked without the other's.
func NodeServiceAccount(node string) string { return "tnf-node-" + node }

// FencingSecret is the Secret of a node's BMC credential, named and shaped as the installer
// makes it: keys address, username, password and certificateVerification.
func FencingSecret(node string) string { return "fencing-credentials-" + node }

// The metrics endpoint's serving certificate: a kubernetes.io/tls Secret the service-ca
// operator issues, kept on the node in two files.
const (
	MetricsTLSSecret   = "tnf-metrics-tls"
	MetricsTLSCertFile = SecretsDir + "/metrics-tls.crt"
	MetricsTLSKeyFile  = SecretsDir + "/metrics-tls.key"
)

// AuthkeySecret is the Secret of the cluster's Corosync key (key AuthkeySecretKey, the raw key).
const (
	AuthkeySecret    = "tnf-corosync-authkey"
	AuthkeySecretKey = "authkey"
)

// Config is /etc/tnf/cluster.yaml. It holds no secret: each BMC password is a file under
// SecretsDir, named in PasswordFile.
type Config struct {
	ClusterName string `json:"clusterName"`
	Nodes       []Node `json:"nodes"`
	// FenceRaceWinner is the node that survives a network split (default: first by name): the
	// device that fences it gets the longer delay.
	FenceRaceWinner string      `json:"fenceRaceWinner,omitempty"`
	FenceDelay      FenceDelay  `json:"fenceDelay,omitempty"`
	AutoUnblock     AutoUnblock `json:"autoUnblock,omitempty"`
	// Token is Corosync's token timeout (default 3 s, as pcs sets it).
	Token     duration.Duration `json:"token,omitempty"`
	Resources Resources         `json:"resources,omitempty"`
	// CorosyncAuthkeyFile is the cluster's shared Corosync key (on the nodes: AuthkeyFile).
	CorosyncAuthkeyFile string `json:"corosyncAuthkeyFile,omitempty"`
	// EtcdPodManifestFile is an external-etcd static pod manifest the node configuration ships
	// for the etcd agent's podman runtime (on the nodes: EtcdPodManifest, where the agent reads
	// it by default). On an OpenShift cluster the cluster-etcd-operator writes that file itself.
	EtcdPodManifestFile string `json:"etcdPodManifestFile,omitempty"`
	// OutOfService is the out-of-service taint on the fenced peer's Node (on unless disabled).
	OutOfService OutOfService `json:"outOfService,omitempty"`
	// SecretsFromAPI says the node fetches its secrets (the BMC passwords, the Corosync key)
	// from Secrets in SecretsNamespace into the files this configuration names. Without it
	// those files come with the node configuration MachineConfig, a setting for labs without an
	// API: a MachineConfig is not encrypted at rest and is readable by whoever reads MachineConfigs.
	SecretsFromAPI *SecretsFromAPI `json:"secretsFromAPI,omitempty"`
}

// SecretsFromAPI is where the node reads its Secrets.
type SecretsFromAPI struct {
	// KubeconfigFile is the credential (default NodeKubeconfig): it may get the layer's Secrets
	// by name, nothing else.
	KubeconfigFile string `json:"kubeconfigFile,omitempty"`
}

// OutOfService says whether the node puts Kubernetes' out-of-service taint on its fenced peer's
// Node (tnf-out-of-service.service) and with which credential.
type OutOfService struct {
	Disabled bool `json:"disabled,omitempty"`
	// KubeconfigFile is the credential for the API, when not the default (Config's
	// OutOfServiceKubeconfig). Read on every pass: the operator that writes LocalhostKubeconfig
	// rotates it.
	KubeconfigFile string `json:"kubeconfigFile,omitempty"`
}

// hiddenFromServices are the folders the layer's confined services cannot see (ProtectHome=yes).
var hiddenFromServices = []string{"/root", "/home", "/run/user"}

// kubeconfigPath checks a kubeconfig's path: clean, absolute, and where the services that read
// it (tnf-metrics, tnf-out-of-service) can see it.
func kubeconfigPath(field, path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%s: %q is not a clean absolute path", field, path)
	}
	for _, dir := range hiddenFromServices {
		if path == dir || strings.HasPrefix(path, dir+"/") {
			return fmt.Errorf("%s: %q is under %s, which the layer's services cannot read: put it under %s", field, path, dir, SecretsDir)
		}
	}
	return nil
}

// OutOfServiceKubeconfig is the taint's credential: the one outOfService names, else the node's
// own (SecretsFromAPI's), which the layer's manifests bind to the taint's ClusterRole only, else
// LocalhostKubeconfig, which is system:masters, past any RBAC. Left empty in the configuration,
// so that the default follows where its secrets come from when a render changes that.
func (c Config) OutOfServiceKubeconfig() string {
	switch {
	case c.OutOfService.KubeconfigFile != "":
		return c.OutOfService.KubeconfigFile
	case c.SecretsFromAPI != nil && c.SecretsFromAPI.KubeconfigFile != "":
		return c.SecretsFromAPI.KubeconfigFile
	case c.SecretsFromAPI != nil:
		return NodeKubeconfig
	}
	return LocalhostKubeconfig
}

// UseKubeconfig makes path the credential of every call to the API: the Secrets' and the taint's.
// It is a command's --kubeconfig, for one run (an administrator's own credential while the node's
// has expired, say); cluster.yaml keeps naming the node's.
func (c *Config) UseKubeconfig(path string) {
	if c.SecretsFromAPI != nil {
		c.SecretsFromAPI.KubeconfigFile = path
	}
	c.OutOfService.KubeconfigFile = path
}

// LocalhostKubeconfig is the kubeconfig for the node's own kube-apiserver that the
// kube-apiserver operator keeps on every control-plane node, the one the field's host scripts
// use.
const LocalhostKubeconfig = "/etc/kubernetes/static-pod-resources/kube-apiserver-certs/secrets/node-kubeconfigs/localhost.kubeconfig"

// NodeIPMap is the etcd agent's node_ip_map: "name:ip" of each node, by name, joined by ";".
func (c Config) NodeIPMap() string {
	nodes := append([]Node(nil), c.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var pairs []string
	for _, n := range nodes {
		pairs = append(pairs, n.Name+":"+n.IP)
	}
	return strings.Join(pairs, ";")
}

// EtcdPodManifest is where the node configuration puts a shipped external-etcd pod manifest.
const EtcdPodManifest = etcdnode.DefaultPodManifest

// Resources say how Pacemaker runs cri-o and kubelet (default: their systemd units; a test
// cluster without systemd names stand-ins) and add parameters to the etcd agent.
type Resources struct {
	Crio    Agent             `json:"crio,omitempty"`
	Kubelet Agent             `json:"kubelet,omitempty"`
	Etcd    map[string]string `json:"etcd,omitempty"` // ocf:tnf:etcd parameters beyond node_ip_map
}

// Agent is a Pacemaker resource agent (class:provider:type or systemd:unit) and its parameters.
type Agent struct {
	Agent  string            `json:"agent,omitempty"`
	Params map[string]string `json:"params,omitempty"`
}

// Node is one of the two nodes.
type Node struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
	BMC  BMC    `json:"bmc"`
}

// BMC is a node's fencing credential, without the password itself.
type BMC struct {
	Address                 string `json:"address"`
	Username                string `json:"username"`
	PasswordFile            string `json:"passwordFile"`
	CertificateVerification string `json:"certificateVerification,omitempty"` // Enabled (default) or Disabled
	// CertificateSHA256 pins the BMC's certificate (openssl x509 -fingerprint -sha256, colons
	// allowed): checked instead of the chain and the name, which BMC certificates rarely match.
	CertificateSHA256 string `json:"certificateSHA256,omitempty"`
	// InsecureSkipCertificateCheck lets the node talk to this BMC although its certificate is
	// neither verified nor pinned, for labs: both fencing levels, fence-check and auto-unblock
	// then send the password to, and take "Off" from, whoever answers at the address. Without it
	// such an entry is refused (ValidateFencing). Ignored where the certificate is checked.
	InsecureSkipCertificateCheck bool `json:"insecureSkipCertificateCheck,omitempty"`
	// UnverifiedPowerOffProof is InsecureSkipCertificateCheck's name from the releases whose
	// second fencing level (fence_redfish) never checked a certificate: it reads as that.
	UnverifiedPowerOffProof bool `json:"unverifiedPowerOffProof,omitempty"`
	// UnverifiedIdentity lets setup accept this BMC entry when nothing can be compared between
	// the BMC's system and the node's machine (neither a UUID nor a MAC address known on both).
	// An entry that reaches another machine is refused all the same.
	UnverifiedIdentity bool `json:"unverifiedIdentity,omitempty"`
	// CAFile is the CA bundle that signs the BMC's certificate. In tnf.yaml a file on the build
	// host; on the node BMCCAFile(node).
	CAFile string `json:"caFile,omitempty"`
}

// BMCCAFile is where a node's BMC CA bundle lives on the nodes: a file of the layer's, not a
// trust anchor of the system, which would make every TLS client of the node trust that CA for
// any name.
func BMCCAFile(node string) string { return BMCCADir + "/" + node + ".pem" }

// BMCCADir holds the BMC CA bundles on the nodes (BMCCAFile).
const BMCCADir = "/etc/tnf/bmc-ca"

// FenceDelay is pcmk_delay_base on the device that fences the race winner (Winner) and on the
// other one (Other). A Winner left out is sized by setup from the BMCs' latency (SizedWinner);
// Other is 0 unless given: the race is settled by Winner alone, and the winner then powers the
// loser off, or a hung loser is rebooted, without waiting.
type FenceDelay struct {
	Winner duration.Duration `json:"winner,omitempty"`
	Other  duration.Duration `json:"other,omitempty"`
}

// UnmeasuredWinnerDelay is the race winner's delay where no BMC was measured (a configuration
// rendered outside setup): the field's.
const UnmeasuredWinnerDelay = 10 * time.Second

// actionMargin is what SizedWinner leaves a BMC to carry a power-off out once it took the
// request, and the two fencers to be scheduled: nothing at setup can measure it without
// powering a node off.
const actionMargin = 3 * time.Second

// SizedWinner is the delay of the device that fences the race winner, for BMCs whose slowest
// answer took latency and a first fencing level whose read may take firstLevelRead. In a split
// both nodes fence: the winner's device runs after Other and the winner's first level, which
// fails on the loser's On at once, or when its read times out; its second level then reads the
// loser's BMC and asks it for ForceOff, and the BMC carries that out. The loser's second level
// asks the winner's BMC the same after Winner. So Winner is Other, the first level's read
// timeout, two answers and actionMargin, in whole seconds, at most 45 s: 7 s with BMCs that
// answer in 50 ms, 13 s with ones that answer in a little over 3 s (the field's 10 s is the
// same for both).
func SizedWinner(other, latency, firstLevelRead time.Duration) time.Duration {
	d := other + firstLevelRead + 2*latency + actionMargin
	d = (d + time.Second - 1) / time.Second * time.Second
	return min(d, MaxFenceDelay)
}

// MaxFenceDelay bounds both delays: they count against the fencing's 60 s timeout.
const MaxFenceDelay = 45 * time.Second

// AutoUnblock is the seed's "Phase 2", off unless enabled.
type AutoUnblock struct {
	Enabled bool              `json:"enabled,omitempty"`
	After   duration.Duration `json:"after,omitempty"`
}

// Defaults fills what was left out. The node order is kept, so errors name fields as written.
func (c *Config) Defaults() {
	if c.FenceRaceWinner == "" && len(c.Nodes) > 0 {
		first := c.Nodes[0].Name
		for _, n := range c.Nodes[1:] {
			first = min(first, n.Name)
		}
		c.FenceRaceWinner = first
	}
	if c.Token.Duration == 0 {
		c.Token.Duration = 3 * time.Second
	}
	if c.Resources.Crio.Agent == "" {
		c.Resources.Crio.Agent = "systemd:crio"
	}
	if c.Resources.Kubelet.Agent == "" {
		c.Resources.Kubelet.Agent = "systemd:kubelet"
	}
	if c.SecretsFromAPI != nil && c.SecretsFromAPI.KubeconfigFile == "" {
		c.SecretsFromAPI.KubeconfigFile = NodeKubeconfig
	}
	if c.AutoUnblock.Enabled && c.AutoUnblock.After.Duration == 0 {
		c.AutoUnblock.After.Duration = 10 * time.Minute
	}
	for i := range c.Nodes {
		b := &c.Nodes[i].BMC
		if b.CertificateVerification == "" {
			b.CertificateVerification = "Enabled"
		}
		if b.UnverifiedPowerOffProof {
			b.InsecureSkipCertificateCheck, b.UnverifiedPowerOffProof = true, false
		}
	}
}

// Validate checks the config; errors carry the path of the bad field.
func (c Config) Validate() error {
	if c.ClusterName == "" {
		return fmt.Errorf("clusterName: missing")
	}
	// The names go into corosync.conf and pcs command lines: RFC 1123, as OpenShift's cluster
	// name (a label) and Kubernetes' node names (a subdomain) already are.
	if errs := validation.IsDNS1123Label(c.ClusterName); len(errs) > 0 {
		return fmt.Errorf("clusterName: %q: %s", c.ClusterName, strings.Join(errs, "; "))
	}
	if len(c.Nodes) != 2 {
		return fmt.Errorf("nodes: exactly two nodes are needed, found %d", len(c.Nodes))
	}
	names := map[string]bool{}
	var addrs []netip.Addr
	var systems []string
	for i, n := range c.Nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
			return fmt.Errorf("%s.name: %q is not a node name: %s", f, n.Name, strings.Join(errs, "; "))
		}
		// The longest API object name made from a node's: a Secret's or a ServiceAccount's name
		// is a DNS subdomain too.
		if errs := validation.IsDNS1123Subdomain(FencingSecret(n.Name)); len(errs) > 0 {
			return fmt.Errorf("%s.name: %q is too long to name its fencing Secret %s: %s", f, n.Name, FencingSecret(n.Name), strings.Join(errs, "; "))
		}
		if names[n.Name] {
			return fmt.Errorf("%s.name: %q is listed twice", f, n.Name)
		}
		names[n.Name] = true
		ip, err := nodeIP(f+".ip", n.IP, addrs)
		if err != nil {
			return err
		}
		addrs = append(addrs, ip)
		a, err := bmc.ParseAddress(f+".bmc.address", n.BMC.Address)
		if err != nil {
			return err
		}
		// Two nodes pointing at one BMC system: the first fencing powers off the survivor.
		system := net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) + a.SystemPath
		if i > 0 && system == systems[0] {
			return fmt.Errorf("%s.bmc.address: the same system as nodes[0].bmc.address (%s): fencing one node would power off the other", f, system)
		}
		systems = append(systems, system)
		if n.BMC.Username == "" {
			return fmt.Errorf("%s.bmc.username: missing", f)
		}
		if p := n.BMC.PasswordFile; filepath.Dir(filepath.Clean(p)) != SecretsDir || filepath.Clean(p) != p {
			return fmt.Errorf("%s.bmc.passwordFile: %q is not a file directly in %s", f, p, SecretsDir)
		}
		if v := n.BMC.CertificateVerification; v != "Enabled" && v != "Disabled" {
			return fmt.Errorf("%s.bmc.certificateVerification: %q is neither Enabled nor Disabled", f, v)
		}
		if ca := n.BMC.CAFile; ca != "" && ca != BMCCAFile(n.Name) {
			return fmt.Errorf("%s.bmc.caFile: %q, want %s", f, ca, BMCCAFile(n.Name))
		}
		if pin := n.BMC.CertificateSHA256; pin != "" {
			if _, err := bmc.ParsePin(pin); err != nil {
				return fmt.Errorf("%s.bmc.certificateSHA256: %w", f, err)
			}
			if a.Scheme != "https" {
				return fmt.Errorf("%s.bmc.certificateSHA256: %s has no certificate to pin (not https)", f, n.BMC.Address)
			}
		}
	}
	// The secrets' sync writes each password file from its Secret: a name another file of the
	// folder holds (the other node's, a credential, the Corosync key) would be
	// overwritten with a BMC password, or overwrite it.
	for i, n := range c.Nodes {
		f := fmt.Sprintf("nodes[%d].bmc.passwordFile", i)
		for _, other := range c.secretFiles() {
			if other.path == n.BMC.PasswordFile && other.field != f {
				return fmt.Errorf("%s: %s is %s too: each secret needs a file of its own", f, n.BMC.PasswordFile, other.field)
			}
		}
	}
	if c.CorosyncAuthkeyFile != AuthkeyFile {
		return fmt.Errorf("corosyncAuthkeyFile: %q, want %s", c.CorosyncAuthkeyFile, AuthkeyFile)
	}
	if f := c.EtcdPodManifestFile; f != "" && f != EtcdPodManifest {
		return fmt.Errorf("etcdPodManifestFile: %q, want %s", f, EtcdPodManifest)
	}
	if s := c.SecretsFromAPI; s != nil {
		if err := kubeconfigPath("secretsFromAPI.kubeconfigFile", s.KubeconfigFile); err != nil {
			return err
		}
	}
	if f := c.OutOfService.KubeconfigFile; f != "" {
		if err := kubeconfigPath("outOfService.kubeconfigFile", f); err != nil {
			return err
		}
	}
	if !names[c.FenceRaceWinner] {
		return fmt.Errorf("fenceRaceWinner: %q is not one of the nodes", c.FenceRaceWinner)
	}
	for _, d := range []struct {
		field    string
		value    time.Duration
		min, max time.Duration
	}{
		// Corosync's token: under half a second the knet link's own timeouts fire first; a
		// minute is far beyond any site's (the field's longest documented value is 5 s).
		{"token", c.Token.Duration, 500 * time.Millisecond, time.Minute},
		{"fenceDelay.winner", c.FenceDelay.Winner.Duration, 0, MaxFenceDelay},
		{"fenceDelay.other", c.FenceDelay.Other.Duration, 0, MaxFenceDelay},
	} {
		if d.value < d.min || d.value > d.max {
			return fmt.Errorf("%s: %v is outside %v to %v", d.field, d.value, d.min, d.max)
		}
	}
	// autoUnblock.after: how long a node waits alone before it asks the peer's BMC, whose
	// answer (Off, twice) is what makes a start alone safe; a negative or day-long wait is a typo.
	if a := c.AutoUnblock.After.Duration; a < 0 || a > 24*time.Hour {
		return fmt.Errorf("autoUnblock.after: %v is outside 0s to 24h0m0s", a)
	}
	if c.FenceDelay.Winner.Duration == 0 && c.FenceDelay.Other.Duration >= UnmeasuredWinnerDelay {
		return fmt.Errorf("fenceDelay.other: %v is not shorter than the race winner's delay where setup cannot measure the BMCs (%v): give fenceDelay.winner too",
			c.FenceDelay.Other, UnmeasuredWinnerDelay)
	}
	if w := c.FenceDelay.Winner.Duration; w != 0 && w <= c.FenceDelay.Other.Duration {
		return fmt.Errorf("fenceDelay.winner: %v must be longer than fenceDelay.other (%v), or both nodes fence each other", c.FenceDelay.Winner, c.FenceDelay.Other)
	}
	return nil
}

// ValidateFencing checks that every fencing path can check its BMC's certificate (bmc.CheckTrust):
// pinned, verified, or opted out of by name; errors carry the path of the field. build-layer
// and tnfctl setup, which renders the fence devices, refuse a configuration that fails it. It is
// not part of Validate: a node keeps reading, for its status and its metrics, a configuration
// written before the rule.
func (c Config) ValidateFencing() error {
	for i, n := range c.Nodes {
		f := fmt.Sprintf("nodes[%d].bmc", i)
		if n.BMC.CAFile != "" && n.BMC.CertificateVerification == "Disabled" {
			return fmt.Errorf("%s.caFile: a CA verifies the BMC's certificate only with certificateVerification Enabled", f)
		}
		cred, err := n.CredentialWith("unread")
		if err != nil {
			return err
		}
		if _, err := fencerun.BMCOptions(cred); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// secretFile is a file of SecretsDir and the field, or the use, that names it.
type secretFile struct{ path, field string }

// secretFiles are the files the node configuration keeps its secrets in.
func (c Config) secretFiles() []secretFile {
	files := []secretFile{{AuthkeyFile, "the Corosync key"}, {NodeKubeconfig, "the node's kubeconfig"},
		{MetricsTLSCertFile, "the metrics certificate"}, {MetricsTLSKeyFile, "the metrics key"}}
	if c.SecretsFromAPI != nil {
		files = append(files, secretFile{c.SecretsFromAPI.KubeconfigFile, "secretsFromAPI.kubeconfigFile"})
	}
	if c.OutOfService.KubeconfigFile != "" {
		files = append(files, secretFile{c.OutOfService.KubeconfigFile, "outOfService.kubeconfigFile"})
	}
	for i, n := range c.Nodes {
		files = append(files, secretFile{n.BMC.PasswordFile, fmt.Sprintf("nodes[%d].bmc.passwordFile", i)})
	}
	return files
}

// nodeIP parses a node's cluster address: one a peer can reach (not loopback, unspecified,
// multicast or link-local), in the family of the addresses before it, and not one of them.
func nodeIP(field, s string, before []netip.Addr) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%s: %q is not an IP address", field, s)
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback(), ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalUnicast():
		return netip.Addr{}, fmt.Errorf("%s: %s is a loopback, unspecified, multicast or link-local address, which the peer cannot reach", field, ip)
	}
	for _, b := range before {
		if b == ip {
			return netip.Addr{}, fmt.Errorf("%s: %s is another node's address too", field, ip)
		}
		if b.Is4() != ip.Is4() {
			return netip.Addr{}, fmt.Errorf("%s: %s is not in the family of %s: the cluster link is one family", field, ip, b)
		}
	}
	return ip, nil
}

// Load reads a node's cluster.yaml. Unknown fields are errors; errors name the file and the field.
func Load(path string) (Config, error) {
	var c Config
	if err := readStrict(path, &c); err != nil {
		return Config{}, err
	}
	c.Defaults()
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// NodeConfig is the node configuration as one node reads it: the whole of it, this node and
// its peer.
type NodeConfig struct {
	Config     Config
	Self, Peer Node
}

// LoadNode reads a node's cluster.yaml and picks the node named name (the host name when name
// is empty) and its peer.
func LoadNode(path, name string) (NodeConfig, error) {
	c, err := Load(path)
	if err != nil {
		return NodeConfig{}, err
	}
	if name == "" {
		if name, err = os.Hostname(); err != nil {
			return NodeConfig{}, err
		}
	}
	self, peer, err := c.Self(name)
	if err != nil {
		return NodeConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return NodeConfig{Config: c, Self: self, Peer: peer}, nil
}

// Self is the node named name, and its peer.
func (c Config) Self(name string) (Node, Node, error) {
	for i, n := range c.Nodes {
		if n.Name == name {
			return n, c.Nodes[1-i], nil
		}
	}
	return Node{}, Node{}, fmt.Errorf("nodes: this node (%q) is not one of them", name)
}

// Marshal renders cluster.yaml, nodes sorted by name.
func (c Config) Marshal() ([]byte, error) {
	c.Nodes = append([]Node(nil), c.Nodes...)
	sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Name < c.Nodes[j].Name })
	return yaml.Marshal(c)
}

// Credential is the node's BMC credential with the password read from its file; errors name
// the field, never the password.
func (n Node) Credential() (bmc.Credential, error) {
	pw, err := os.ReadFile(n.BMC.PasswordFile)
	if err != nil {
		return bmc.Credential{}, fmt.Errorf("nodes[%s].bmc.passwordFile: %w", n.Name, err)
	}
	password := strings.TrimRight(string(pw), "\r\n")
	if err := bmc.CheckPassword(password); err != nil {
		return bmc.Credential{}, fmt.Errorf("nodes[%s].bmc.passwordFile: %s: the password %w", n.Name, n.BMC.PasswordFile, err)
	}
	return n.CredentialWith(password)
}

// CredentialWith is the node's BMC credential with the given password (a value, or a reference
// such as cibsecret's that Pacemaker resolves).
func (n Node) CredentialWith(password string) (bmc.Credential, error) {
	addr, err := bmc.ParseAddress("nodes["+n.Name+"].bmc.address", n.BMC.Address)
	if err != nil {
		return bmc.Credential{}, err
	}
	cred := bmc.Credential{Address: addr, Username: n.BMC.Username, Password: password,
		VerifyCertificate: n.BMC.CertificateVerification != "Disabled", InsecureSkipCertificateCheck: n.BMC.InsecureSkipCertificateCheck, CAFile: n.BMC.CAFile}
	if n.BMC.CertificateSHA256 != "" {
		if cred.PinSHA256, err = bmc.ParsePin(n.BMC.CertificateSHA256); err != nil {
			return bmc.Credential{}, fmt.Errorf("nodes[%s].bmc.certificateSHA256: %w", n.Name, err)
		}
	}
	return cred, nil
}
