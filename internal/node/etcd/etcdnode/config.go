// Package etcdnode is what the etcd agent knows and keeps about its node: the validated resource
// configuration, the data record it publishes for the peer, its promotion score, and the fast
// monitor. It links no etcd or gRPC package, so the agent's entry binary starts in a couple of
// milliseconds (see agents/ocf-etcd).
package etcdnode

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencealert"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// Config is the validated resource configuration of one node.
type Config struct {
	Resource       string
	Self, Peer     string
	SelfIP, PeerIP string
	DataDir        string
	ClientPort     int
	PeerPort       int
	TLS            *etcdrun.TLS
	Runtime        string
	EtcdBinary     string
	PodManifest    string
	// StaticPodManifest is the kubelet's etcd static pod: while it has an etcd container, the
	// installer's etcd runs from DataDir and the agent starts nothing.
	StaticPodManifest string
	PodmanBinary      string
	StateDir          string
	LogFile           string
	Backups           int
	RequestTimeout    time.Duration
	// LivenessTimeout bounds a status read (see the liveness_timeout parameter).
	LivenessTimeout time.Duration
	// StartBothTimeout bounds a cold boot's wait for the peer's member (start_both_timeout).
	StartBothTimeout time.Duration
	AttributeStore   string
	GracefulLeave    bool
	// RequireMountpoint: data_dir must be a mount point (etcd on a disk of its own).
	RequireMountpoint bool
	// FencingSocket is where the watcher takes the fencing alert (fencealert.Listen).
	FencingSocket string
	// InsecurePlaintext allows etcd without TLS on a non-loopback address (a test setting).
	InsecurePlaintext bool
}

// DefaultPodManifest is where the cluster-etcd-operator's installer writes the external etcd pod.
const DefaultPodManifest = "/etc/kubernetes/static-pod-resources/etcd-certs/configmaps/external-etcd-pod/pod.yaml"

// DefaultStaticPodManifest is where the cluster-etcd-operator's installer writes etcd's static
// pod for the kubelet.
const DefaultStaticPodManifest = "/etc/kubernetes/manifests/etcd-pod.yaml"

// Parameters is the single description of every parameter: the meta-data is rendered from it
// and the defaults are taken from it. The reloadable ones are read by each action afresh, and by
// the watcher, which the agent's reload-agent (or the next monitor: Config.WatcherStale) starts
// again with them: a change of only those reaches the running resource without a restart of
// etcd.
var Parameters = []ocf.Parameter{
	{Name: "node_ip_map", Required: true, Type: "string", Shortdesc: "Node names and their IPs",
		Longdesc: "The two cluster nodes as name:ip pairs separated by ';' (IPv6 allowed, e.g. node1:192.0.2.1;node2:fd00::2). Names are Pacemaker node names."},
	{Name: "data_dir", Type: "string", Default: "/var/lib/etcd", Shortdesc: "etcd data directory",
		Longdesc: "The etcd data directory. Data that must be erased before joining the peer is moved aside next to it."},
	{Name: "client_port", Type: "integer", Default: "2379", Shortdesc: "Client port", Longdesc: "etcd client port on each node's IP."},
	{Name: "peer_port", Type: "integer", Default: "2380", Shortdesc: "Peer port", Longdesc: "etcd peer port on each node's IP."},
	{Name: "cert_file", Type: "string", Shortdesc: "Client TLS certificate",
		Longdesc: "Serving certificate for clients. Setting cert_file, key_file and trusted_ca_file turns TLS on for clients and peers. Runtime podman without TLS parameters takes the certificates of pod_manifest's etcd command."},
	{Name: "key_file", Type: "string", Shortdesc: "Client TLS key", Longdesc: "Key of cert_file."},
	{Name: "trusted_ca_file", Type: "string", Shortdesc: "Client CA bundle", Longdesc: "CA that signs client certificates (and the agent's own client certificate, which is cert_file)."},
	{Name: "peer_cert_file", Type: "string", Shortdesc: "Peer TLS certificate", Longdesc: "Peer certificate; defaults to cert_file."},
	{Name: "peer_key_file", Type: "string", Shortdesc: "Peer TLS key", Longdesc: "Key of peer_cert_file; defaults to key_file."},
	{Name: "peer_trusted_ca_file", Type: "string", Shortdesc: "Peer CA bundle", Longdesc: "CA for peer certificates; defaults to trusted_ca_file."},
	{Name: "runtime", Type: "string", Default: "exec", Shortdesc: "How etcd runs",
		Longdesc: "exec: the etcd binary as a supervised process. podman: a container with the image, environment, mounts and further etcd flags of OpenShift's external-etcd static pod manifest (pod_manifest)."},
	{Name: "etcd_binary", Type: "string", Default: "/usr/bin/etcd", Shortdesc: "etcd binary (runtime exec)", Longdesc: "Path of the etcd binary for the exec runtime."},
	{Name: "pod_manifest", Type: "string", Default: DefaultPodManifest, Shortdesc: "External etcd pod manifest (runtime podman)",
		Longdesc: "The static pod manifest written by the cluster-etcd-operator for external etcd; its etcd container gives the image, environment, host mounts (not the per-revision folder), the TLS files and the etcd flags the agent does not own."},
	{Name: "static_pod_manifest", Type: "string", Default: DefaultStaticPodManifest, Shortdesc: "The kubelet's etcd static pod manifest",
		Longdesc: "While this manifest has a container named etcd, the installer's etcd runs on this node from data_dir: the agent starts nothing, joins nothing and moves nothing, and waits for the handover (tnfctl handover) to take the container out. A missing manifest means no installer etcd; one that cannot be read fails the action."},
	{Name: "podman_binary", Type: "string", Default: "/usr/bin/podman", Shortdesc: "podman binary (runtime podman)", Longdesc: "Path of podman."},
	{Name: "state_dir", Type: "string", Default: "/run/tnf-etcd", Shortdesc: "Runtime state directory",
		Longdesc: "Where the agent keeps its per-boot state (started marker, etcd PID). Must be on a tmpfs that is emptied at boot."},
	{Name: "log_file", Type: "string", Default: "/var/log/tnf-etcd.log", Shortdesc: "etcd log (runtime exec)", Longdesc: "File etcd's output is appended to."},
	{Name: "backup_count", Type: "integer", Default: "3", Shortdesc: "Moved-aside data dirs kept", Longdesc: "How many moved-aside data directories are kept; older ones are deleted.", Reloadable: true},
	{Name: "request_timeout", Type: "integer", Default: "5", Shortdesc: "etcd request timeout (s)", Longdesc: "Deadline of every single etcd request the agent makes.", Reloadable: true},
	{Name: "liveness_timeout", Type: "integer", Default: "2", Shortdesc: "etcd status timeout (s)",
		Longdesc: "Deadline of a member's status read, which etcd answers without raft. A local member that does not answer it in time is frozen: the monitor fails at once and the member is killed without a grace period. Chosen far above the status latency measured under a heavy write load (see README).", Reloadable: true},
	{Name: "start_both_timeout", Type: "integer", Default: "60", Shortdesc: "Wait for the peer's member at a cold boot (s)",
		Longdesc: "Both nodes back with voters of their two-member cluster start both members as they are, with nothing forced or streamed, and raft elects the newer log. A node whose member has no leader after this long (its peer's did not come) stops it and decides as it would have otherwise (force a cluster of one, or wait for the peer), and does not try both members again until it boots again. Keep it below the promote timeout.", Reloadable: true},
	{Name: "graceful_leave", Type: "boolean", Default: "true", Shortdesc: "Leave the member list on a planned stop",
		Longdesc: "On a planned stop or demote of a voter whose peer serves as a voter, hand leadership to the peer and remove the local member first, so the peer keeps quorum alone and nothing is forced. Of two nodes stopping at once only one leaves; the last voter never does.", Reloadable: true},
	{Name: "require_mountpoint", Type: "boolean", Default: "false", Shortdesc: "data_dir must be a mount point",
		Longdesc: "For etcd on a disk of its own: while data_dir is not a mount point (the disk did not mount), every action that reads it fails, naming the reason, instead of reading an empty folder as no data.", Reloadable: true},
	{Name: "insecure_plaintext", Type: "boolean", Default: "false", Shortdesc: "Test setting: etcd without TLS on the node's address",
		Longdesc: "Runtime exec without the TLS parameters serves clients and peers on the node's address with neither TLS nor client authentication: anyone who reaches the address reads and writes OpenShift's data. The agent refuses that unless this test setting is true (loopback addresses need no setting)."},
	{Name: "fencing_socket", Type: "string", Default: fencealert.DefaultSocket, Shortdesc: "Where the fencing alert reaches the agent",
		Longdesc: "The Unix socket the agent's watcher listens on for the fencing alert agent (tnf-fencing-alert). Its folder must be writable by root alone. The alert agent sends to the default only: change it for tests that run two nodes on one host."},
	{Name: "attribute_store", Type: "string", Default: "crm", Shortdesc: "Where attributes are published",
		Longdesc: "crm: Pacemaker's CIB through crm_attribute and cibadmin. file:PATH: a file shared by both nodes, for tests without a cluster."},
}

func defaultOf(name string) string {
	for _, p := range Parameters {
		if p.Name == name {
			return p.Default
		}
	}
	panic("unknown parameter " + name)
}

func configured(format string, args ...any) *ocf.Error {
	return ocf.Errorf(ocf.ErrConfigured, fmt.Sprintf(format, args...))
}

// LoadConfig reads and validates the parameters. Errors name the parameter.
func LoadConfig(env ocf.Env) (Config, error) {
	get := func(name string) string {
		if v, ok := env.Param(name); ok && v != "" {
			return v
		}
		return defaultOf(name)
	}
	integer := func(name string) (int, error) { return integerParameter(name, get(name)) }
	c := Config{
		DataDir: get("data_dir"), Runtime: get("runtime"), EtcdBinary: get("etcd_binary"),
		PodManifest: get("pod_manifest"), StaticPodManifest: get("static_pod_manifest"), PodmanBinary: get("podman_binary"), StateDir: get("state_dir"),
		LogFile: get("log_file"), AttributeStore: get("attribute_store"), FencingSocket: get("fencing_socket"),
	}
	if c.Resource = env.Get("OCF_RESOURCE_INSTANCE"); c.Resource == "" {
		c.Resource = "etcd"
	}
	var err error
	if c.Self, err = nodeName(env); err != nil {
		return c, err
	}
	if c.Peer, c.SelfIP, c.PeerIP, err = parseNodeIPMap(get("node_ip_map"), c.Self); err != nil {
		return c, err
	}
	if c.ClientPort, err = integer("client_port"); err != nil {
		return c, err
	}
	if c.PeerPort, err = integer("peer_port"); err != nil {
		return c, err
	}
	if c.ClientPort == c.PeerPort {
		return c, configured("parameter peer_port: %d is also client_port", c.PeerPort)
	}
	if c.Backups, err = integer("backup_count"); err != nil {
		return c, err
	}
	secs, err := integer("request_timeout")
	if err != nil {
		return c, err
	}
	c.RequestTimeout = time.Duration(secs) * time.Second
	if secs, err = integer("liveness_timeout"); err != nil {
		return c, err
	}
	c.LivenessTimeout = time.Duration(secs) * time.Second
	if secs, err = integer("start_both_timeout"); err != nil {
		return c, err
	}
	c.StartBothTimeout = time.Duration(secs) * time.Second
	for _, p := range []struct{ name, val string }{{"data_dir", c.DataDir}, {"static_pod_manifest", c.StaticPodManifest}, {"state_dir", c.StateDir}, {"log_file", c.LogFile}, {"fencing_socket", c.FencingSocket}} {
		if !filepath.IsAbs(p.val) {
			return c, configured("parameter %s: %q is not an absolute path", p.name, p.val)
		}
	}
	if c.TLS, err = loadTLS(get); err != nil {
		return c, err
	}
	switch c.Runtime {
	case "exec":
		if err := executable(c.EtcdBinary); err != nil {
			return c, ocf.Errorf(ocf.ErrInstalled, "parameter etcd_binary: "+err.Error())
		}
	case "podman":
		if err := executable(c.PodmanBinary); err != nil {
			return c, ocf.Errorf(ocf.ErrInstalled, "parameter podman_binary: "+err.Error())
		}
		if _, err := os.Stat(c.PodManifest); err != nil {
			return c, configured("parameter pod_manifest: %v", err)
		}
	default:
		return c, configured("parameter runtime: %q is neither exec nor podman", c.Runtime)
	}
	if c.InsecurePlaintext, err = boolean(get, "insecure_plaintext"); err != nil {
		return c, err
	}
	// Runtime podman takes the pod manifest's certificates, read later (CheckPlaintext there).
	if c.Runtime == "exec" {
		if err := c.CheckPlaintext(); err != nil {
			return c, err
		}
	}
	if c.GracefulLeave, err = boolean(get, "graceful_leave"); err != nil {
		return c, err
	}
	if c.RequireMountpoint, err = boolean(get, "require_mountpoint"); err != nil {
		return c, err
	}
	if c.AttributeStore != "crm" && !strings.HasPrefix(c.AttributeStore, "file:/") {
		return c, configured("parameter attribute_store: %q is neither crm nor file:/ABSOLUTE/PATH", c.AttributeStore)
	}
	return c, nil
}

// CheckPlaintext refuses etcd without TLS (no certificates: TLS nil) on an address others reach,
// unless insecure_plaintext allows it: etcd would serve OpenShift's data to anyone, without
// authentication. A loopback node address is no exception with podman: the container's etcd
// listens on every address of the node.
func (c Config) CheckPlaintext() error {
	ip := net.ParseIP(c.SelfIP)
	private := ip != nil && ip.IsLoopback() && c.Runtime != "podman"
	if c.TLS == nil && !c.InsecurePlaintext && !private {
		return configured("parameter cert_file: etcd would serve clients and peers on %s without TLS or client authentication; "+
			"set cert_file, key_file and trusted_ca_file, or give the pod manifest's etcd its certificates (or insecure_plaintext=true, a test setting)", c.SelfIP)
	}
	return nil
}

// integerRanges are the integer parameters and the values each takes.
var integerRanges = map[string][2]int{
	"client_port": {1, 65535}, "peer_port": {1, 65535}, "backup_count": {0, 100},
	"request_timeout": {1, 300}, "liveness_timeout": {1, 300}, "start_both_timeout": {1, 240},
}

func integerParameter(name, v string) (int, error) {
	r := integerRanges[name]
	n, err := strconv.Atoi(v)
	if err != nil || n < r[0] || n > r[1] {
		return 0, configured("parameter %s: %q is not an integer from %d to %d", name, v, r[0], r[1])
	}
	return n, nil
}

// CheckValues checks each parameter value on its own, away from the node that runs it: that it
// names a parameter of the agent, and is an integer in its range or a boolean. A value the agent
// refuses makes Pacemaker stop etcd on both nodes (a configuration error is fatal to it): tnfctl
// setup refuses these before they reach the CIB. What LoadConfig checks of values together
// (the ports, paths, the TLS files) or of the node (its binaries) is left to the agent.
func CheckValues(values map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		v := values[name]
		i := slices.IndexFunc(Parameters, func(p ocf.Parameter) bool { return p.Name == name })
		if i < 0 {
			return configured("parameter %s: the agent has no such parameter", name)
		}
		var err error
		switch Parameters[i].Type {
		case "integer":
			_, err = integerParameter(name, v)
		case "boolean":
			_, err = boolean(func(string) string { return v }, name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// boolean reads a boolean parameter as Pacemaker spells them.
func boolean(get func(string) string, name string) (bool, error) {
	switch v := get(name); strings.ToLower(v) {
	case "true", "yes", "1", "on":
		return true, nil
	case "false", "no", "0", "off":
		return false, nil
	default:
		return false, configured("parameter %s: %q is not a boolean (true or false)", name, v)
	}
}

// nodeName is this node's Pacemaker name: Pacemaker passes it with every action; a manual run
// (or ocf-tester) falls back to the host name, which is what Pacemaker uses by default.
func nodeName(env ocf.Env) (string, error) {
	if n := env.Meta("on_node"); n != "" {
		return n, nil
	}
	n, err := os.Hostname()
	if err != nil {
		return "", configured("cannot tell this node's name: %v", err)
	}
	return n, nil
}

// parseNodeIPMap parses "name:ip;name:ip". An IPv6 address may be bare or in brackets.
func parseNodeIPMap(v, self string) (peer, selfIP, peerIP string, err error) {
	nodes := map[string]string{}
	var order []string
	for _, item := range strings.Split(v, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, ip, ok := strings.Cut(item, ":")
		ip = strings.TrimSuffix(strings.TrimPrefix(ip, "["), "]")
		if !ok || name == "" || net.ParseIP(ip) == nil {
			return "", "", "", configured("parameter node_ip_map: %q is not name:ip", item)
		}
		if _, dup := nodes[name]; dup {
			return "", "", "", configured("parameter node_ip_map: node %q is listed twice", name)
		}
		nodes[name] = net.ParseIP(ip).String()
		order = append(order, name)
	}
	if len(nodes) != 2 {
		return "", "", "", configured("parameter node_ip_map: %q must list exactly two nodes, it lists %d", v, len(nodes))
	}
	if _, ok := nodes[self]; !ok {
		return "", "", "", configured("parameter node_ip_map: this node %q is not listed in %q", self, v)
	}
	for _, n := range order {
		if n != self {
			peer = n
		}
	}
	if nodes[self] == nodes[peer] {
		return "", "", "", configured("parameter node_ip_map: both nodes have IP %s", nodes[self])
	}
	return peer, nodes[self], nodes[peer], nil
}

func loadTLS(get func(string) string) (*etcdrun.TLS, error) {
	t := etcdrun.TLS{
		CertFile: get("cert_file"), KeyFile: get("key_file"), TrustedCAFile: get("trusted_ca_file"),
		PeerCertFile: get("peer_cert_file"), PeerKeyFile: get("peer_key_file"), PeerTrustedCAFile: get("peer_trusted_ca_file"),
	}
	if t == (etcdrun.TLS{}) {
		return nil, nil
	}
	for _, p := range []struct{ name, val string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"trusted_ca_file", t.TrustedCAFile}} {
		if p.val == "" {
			return nil, configured("parameter %s: required when any TLS file is set", p.name)
		}
	}
	if t.PeerCertFile == "" {
		t.PeerCertFile = t.CertFile
	}
	if t.PeerKeyFile == "" {
		t.PeerKeyFile = t.KeyFile
	}
	if t.PeerTrustedCAFile == "" {
		t.PeerTrustedCAFile = t.TrustedCAFile
	}
	files := []struct{ name, val string }{
		{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"trusted_ca_file", t.TrustedCAFile},
		{"peer_cert_file", t.PeerCertFile}, {"peer_key_file", t.PeerKeyFile}, {"peer_trusted_ca_file", t.PeerTrustedCAFile},
	}
	for _, f := range files {
		if _, err := os.Stat(f.val); err != nil {
			return nil, configured("parameter %s: %v", f.name, err)
		}
	}
	return &t, nil
}

func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// Scheme is https when TLS is on.
func (c Config) Scheme() string {
	if c.TLS != nil {
		return "https"
	}
	return "http"
}

// HostPort joins an IP (v4 or v6) and a port.
func HostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// ClientURL is the client URL of the node with that IP.
func (c Config) ClientURL(ip string) string { return c.Scheme() + "://" + HostPort(ip, c.ClientPort) }

// PeerURL is the peer URL of the node with that IP.
func (c Config) PeerURL(ip string) string { return c.Scheme() + "://" + HostPort(ip, c.PeerPort) }

// Store opens the configured attribute store.
func (c Config) Store() attrs.Store {
	if path, ok := strings.CutPrefix(c.AttributeStore, "file:"); ok {
		return attrs.File{Path: path}
	}
	return attrs.CRM{}
}

// ConfigOf is the configuration the agent runs with on node self, from the resource's parameters
// as the node configuration gives them (resources.etcd) and node_ip_map: for tools beside the
// agent (tnfctl) that must find its data dir and attribute store.
func ConfigOf(self, nodeIPMap string, params map[string]string) (Config, error) {
	env := map[string]string{"OCF_RESKEY_CRM_meta_on_node": self, "OCF_RESKEY_node_ip_map": nodeIPMap}
	for k, v := range params {
		env["OCF_RESKEY_"+k] = v
	}
	return LoadConfig(ocf.MapEnv(env))
}

// BusyPort is the first of this node's etcd ports something listens on, "" when both are free.
func (c Config) BusyPort() string {
	for _, port := range []int{c.ClientPort, c.PeerPort} {
		l, err := net.Listen("tcp", HostPort(c.SelfIP, port))
		if err != nil {
			return HostPort(c.SelfIP, port)
		}
		l.Close()
	}
	return ""
}
