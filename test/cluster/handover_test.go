//go:build integration

package cluster_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/dynamic"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
	"github.com/tnf-layer/tnf-layer/test/logline"
)

// handoverUser is tnf-handover.service's identity: a token bound to handover.ClusterRole() only,
// so a step that needed more would fail here.
const handoverUser = "tnf-handover"

// newInstalledCluster is newAPICluster as the installer leaves a two-node cluster when the layer
// arrives: on each node etcd runs as the cluster-etcd-operator's static pod (its etcd container
// run by a stand-in kubelet from /etc/kubernetes/manifests/etcd-pod.yaml), the two members one
// cluster created by the installer, and tnf-handover.service runs after setup. As build-layer's
// default delivers them, the nodes' secrets are Secrets they fetch through the API
// (waitAPIsAndDeliverSecrets): no secret file is on their disks.
func newInstalledCluster(t testing.TB) *cluster {
	c := newAPICluster(t, func(cfg *clusterconfig.Config) {
		cfg.SecretsFromAPI = &clusterconfig.SecretsFromAPI{KubeconfigFile: pkiDir + "/node.kubeconfig"}
	})
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		c.write(n.path("disk", strings.TrimPrefix(etcdnode.DefaultStaticPodManifest, "/")), c.installerPod(name, true), 0o644)
		// The operator's revision folder beside it (static-pod-resources/etcd-pod-<N>).
		if err := os.MkdirAll(n.path("disk", "etc", "kubernetes", "static-pod-resources", "etcd-pod-3"), 0o755); err != nil {
			t.Fatal(err)
		}
		n.StaticPods = etcdnode.DefaultStaticPodManifest
		n.Handover = []string{filepath.Join(c.bin, "tnfctl"), "handover", "--kubeconfig", pkiDir + "/handover.kubeconfig"}
		n.SecretsFromAPI = true
		c.layout.Nodes[name] = n
	}
	c.writeLayout()
	return c
}

// upInstalled boots both nodes of an installed cluster and delivers their secrets; it returns
// once setup has configured the cluster, whose etcd agents wait behind the installer's etcd:
// started, not promoted, on both.
func (c *cluster) upInstalled() {
	c.t.Helper()
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitAPIsAndDeliverSecrets()
	c.waitRoles("node1", map[string]string{"node1": "Unpromoted", "node2": "Unpromoted"})
}

// authkey is the cluster's Corosync key.
func (c *cluster) authkey() []byte {
	for _, s := range c.input.Secrets {
		if s.Path == clusterconfig.AuthkeyFile {
			key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(s.Data)))
			if err != nil {
				c.t.Fatal(err)
			}
			return key
		}
	}
	c.t.Fatal("the node configuration has no Corosync key")
	return nil
}

// waitAPIsAndDeliverSecrets waits until both API servers are ready, then does what an
// administrator does once build-layer's manifests are written: applies the Secrets and the
// nodes' ServiceAccounts with their Roles, and gives each node its ServiceAccount's token with
// install.md's command (doccheck.InstallCredential). Setup waits for both, then fetches the Secrets.
func (c *cluster) waitAPIsAndDeliverSecrets() {
	c.t.Helper()
	for _, n := range c.nodes {
		c.waitAPIReady(n)
	}
	tokens := applySecrets(c.t, c.restConfig("node1"), c.input)
	argv := doccheck.InstallCredential(c.t, "node")
	for _, name := range c.nodes {
		// Through the running node's own view of its /etc: a file written into the overlay's
		// upper folder behind its back may stay unseen.
		h := c.layout.Nodes[name].holder()
		if h == 0 {
			c.t.Fatalf("%s is off", name)
		}
		root := fmt.Sprintf("/proc/%d/root", h)
		// The stand-in of the kubeconfig MCO writes for the kubelet: the API the node reaches
		// and its CA bundle, whence the command takes both.
		ca, err := os.ReadFile(filepath.Join(root, pkiDir, "ca.crt"))
		if err != nil {
			c.t.Fatal(err)
		}
		kubelet, err := kubeapi.Kubeconfig("https://"+net.JoinHostPort(c.ip[name], apiPort), "", ca, "kubelet-bootstrap-stand-in")
		if err != nil {
			c.t.Fatal(err)
		}
		c.write(filepath.Join(root, nodetoken.KubeletKubeconfig), kubelet, 0o600)
		if out, err := c.runInput(name, strings.NewReader(tokens[name]+"\n"), append([]string{c.tnfctlPath(name)}, argv[1:]...)...); err != nil ||
			!strings.Contains(out, "system:serviceaccount:openshift-etcd:tnf-node-"+name+"'s token, valid until") {
			c.t.Fatalf("%s: %s: %v\n%s", name, strings.Join(argv, " "), err, out)
		}
	}
}

// installerPod is node's static pod as the operator's installer writes it (kubeletstandin), its
// etcd container the member the installer created, with the same name, URLs, data dir and
// certificates the agent uses; withEtcd false is the revision without it.
func (c *cluster) installerPod(node string, withEtcd bool) []byte {
	pki := func(f string) string { return pkiDir + "/" + f }
	tls := &etcdrun.TLS{CertFile: pki("etcd-serving.crt"), KeyFile: pki("etcd-serving.key"), TrustedCAFile: pki("ca.crt"),
		PeerCertFile: pki("etcd-serving.crt"), PeerKeyFile: pki("etcd-serving.key"), PeerTrustedCAFile: pki("ca.crt")}
	peerURL := func(n string) string { return "https://" + c.ip[n] + ":2380" }
	spec := etcdrun.Spec{Name: node, DataDir: "/var/lib/etcd", ClientURLs: []string{c.etcdURL(node)}, PeerURL: peerURL(node),
		InitialCluster: map[string]string{"node1": peerURL("node1"), "node2": peerURL("node2")}, ClusterState: "new", TLS: tls,
		ExtraArgs: []string{"--initial-cluster-token=installer"}}
	data, err := json.Marshal(kubeletstandin.InstallerPod(spec, testbin.Etcd(c.t), "3", withEtcd))
	if err != nil {
		c.t.Fatal(err)
	}
	return data
}

// rollOutWithoutEtcd is the stand-in for the operator's rollout of the revision without the
// etcd container on node: its installer replaces the static pod manifest as library-go's
// installer pod does (installerpod writePod), removed and then written, not atomically, so a
// reader may find it missing or half-written.
func (c *cluster) rollOutWithoutEtcd(node string) {
	c.t.Helper()
	h := c.layout.Nodes[node].holder()
	if h == 0 {
		c.t.Fatalf("%s is off", node)
	}
	path := filepath.Join(fmt.Sprintf("/proc/%d/root", h), etcdnode.DefaultStaticPodManifest)
	if err := os.Remove(path); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(path, c.installerPod(node, false), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("%s: the operator's stand-in rolled out the static pod without etcd", node)
}

// registerOperator is kubeapi.RegisterEtcdOperator through node1's API server, for
// tnf-handover.service's identity.
func (c *cluster) registerOperator() dynamic.ResourceInterface {
	c.t.Helper()
	var etcds dynamic.ResourceInterface
	// As an administrator does, again after a transient error: right after a node's return, the
	// API's first request over a connection to its etcd from before the power cut is reset.
	c.waitFor("the operator's API registered", time.Minute, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		etcds, err = kubeapi.RegisterEtcdOperator(ctx, c.restConfig("node1"), rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: handoverUser})
		return err == nil, fmt.Sprint(err)
	})
	return etcds
}

// etcdIdentity is the cluster ID and the member IDs by name, read through node's member.
func (c *cluster) etcdIdentity(node string) (uint64, map[string]uint64) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, members, err := etcdcheck.Identity(ctx, c.etcdClient(node))
	if err != nil {
		c.t.Fatal(err)
	}
	return id, members
}

// waitAgentServes waits until node's tnf-handover.service saw the agent's member serve there,
// promoted, beside a voting peer with a leader: its last step (setting the completion once the
// peer serves too) is under way or done.
func (c *cluster) waitAgentServes(node string) {
	c.t.Helper()
	c.waitFor(node+"'s agent serves, for its handover", settle, func() (bool, string) {
		st, ok, err := handover.ReadState(c.layout.Nodes[node].path("disk", "var-lib", "tnf", "handover.json"))
		return err == nil && ok && st.Step == handover.StepDone, fmt.Sprint(st, err)
	})
}

// waitHandoverCompleted waits until the Etcd object says the transition completed and both
// nodes' tnf-handover.service are done, each having removed its credential.
func (c *cluster) waitHandoverCompleted(etcds dynamic.ResourceInterface) {
	c.t.Helper()
	c.waitFor("tnf-handover.service set "+handover.ConditionCompleted, settle, func() (bool, string) {
		return kubeapi.ConditionTrue(etcds, handover.ConditionCompleted), ""
	})
	for _, node := range c.nodes {
		c.waitFor(node+"'s handover done", settle, func() (bool, string) {
			st, ok, err := handover.ReadState(c.layout.Nodes[node].path("disk", "var-lib", "tnf", "handover.json"))
			return err == nil && ok && st.Done(), fmt.Sprint(st, err)
		})
		credential := filepath.Join(c.layout.Nodes[node].Dir, "disk", "etc", strings.TrimPrefix(pkiDir, "/etc/"), "handover.kubeconfig")
		c.waitFor(node+"'s handover credential removed", settle, func() (bool, string) {
			_, err := os.Stat(credential)
			return errors.Is(err, fs.ErrNotExist), fmt.Sprint(err)
		})
	}
}

// launches are when node's agent launched etcd (its log), in order.
func (c *cluster) launches(node string) []time.Time {
	var at []time.Time
	for _, line := range strings.Split(readFile(c.pacemakerLog(node)), "\n") {
		if t, ok := logline.AgentTime(line); ok && logline.Field(line, "msg") == "launching etcd" {
			at = append(at, t)
		}
	}
	return at
}

// TestHandover: a cluster as the installer leaves it (etcd in the operator's static pod on both
// nodes) gets the layer; a writer creates objects through node1's API and informers watch through
// both. tnf-handover.service tells the operator, whose stand-in rolls the static pod out without
// etcd, node1 then node2; each node's agent starts the same member on the same data. Every
// acknowledged object reaches both informers, in order (their relists are logged), the cluster
// and member IDs are those the installer made, nothing was moved aside, forced or joined, and
// each node's write gap is logged.
func TestHandover(t *testing.T) {
	t.Parallel()
	c := newInstalledCluster(t)
	c.upInstalled()
	c.registerNodes()
	clusterID, members := c.etcdIdentity("node1")
	etcdWrites := c.writing()
	apiWrites := c.startAPIClients("handover", "node1")
	logs := c.agentLogSizes()
	etcds := c.registerOperator()

	c.waitFor("tnf-handover.service set "+handover.ConditionReady, settle, func() (bool, string) {
		return kubeapi.ConditionTrue(etcds, handover.ConditionReady), ""
	})
	// Until the operator acts, each node waits and says why.
	for _, node := range c.nodes {
		c.waitFor(node+"'s handover waits for the operator", settle, func() (bool, string) {
			st, ok, err := handover.ReadState(c.layout.Nodes[node].path("disk", "var-lib", "tnf", "handover.json"))
			return err == nil && ok && st.Step == handover.StepInstaller && strings.Contains(st.Waiting, "operator has not rolled out"), fmt.Sprint(st, err)
		})
		if out, _, err := c.statusRun(node); err != nil || !strings.Contains(out, "Handover:  waiting for "+handover.StepInstaller) {
			t.Errorf("tnfctl status on %s (%v) does not say where the handover waits:\n%s", node, err, out)
		}
		c.checkHandoverPending(node, true) // which keeps TNFEtcdNotVoter and TNFNodeInert quiet
	}
	gaps := map[string]time.Duration{}
	for _, node := range c.nodes {
		began := time.Now()
		c.rollOutWithoutEtcd(node)
		// The operator's installer rolls the next node once this one's static pod is ready: its
		// etcd-readyz container reads the local member, which is now the agent's.
		c.waitAgentServes(node)
		c.waitWrites(apiWrites.writer, node+" handed over, through the API")
		gaps[node] = apiWrites.LongestGap(began, time.Now())
		c.t.Logf("%s handed over: longest API write gap %v, etcd's %v", node, gaps[node].Round(time.Millisecond),
			etcdWrites.LongestGap(began, time.Now()).Round(time.Millisecond))
	}
	c.waitHandoverCompleted(etcds)
	for _, node := range c.nodes {
		c.checkHandoverPending(node, false)
	}

	// Relists are logged, not failed: etcd ends the API server's watches once its member has had
	// no leader for three election timeouts (3 s), which a handover's wait passes on a loaded
	// machine (install.md's goal is 3 s). Every acknowledged object must still arrive, in order.
	c.stopAPIClients(apiWrites)
	c.stopAndCheck(etcdWrites)
	afterID, afterMembers := c.etcdIdentity("node2")
	if afterID != clusterID || fmt.Sprint(afterMembers) != fmt.Sprint(members) {
		t.Errorf("etcd after the handover: cluster %x, members %x; the installer's: cluster %x, members %x", afterID, afterMembers, clusterID, members)
	}
	// The installer's etcd takes seconds to stop (it hands its leadership over first): the
	// agent launches its member once, after the kubelet began to stop that etcd, and never while
	// it held the data (a member launched then fails its start and is launched again). etcd
	// lets go of its data and ports up to a second before it exits (it waits for its peers'
	// idle connections), so the launch may precede the exit.
	for _, node := range c.nodes {
		stopping, launched := c.kubeletStoppingEtcd(node), c.launches(node)
		if stopping.IsZero() || len(launched) != 1 || launched[0].Before(stopping) {
			t.Errorf("%s: the agent launched etcd at %v, once after the kubelet began to stop the installer's at %v", node, launched, stopping)
		}
	}
	decisions := c.agentLogsSince(logs)
	for _, bad := range []string{"decision=join-as-learner", "decision=force-new-cluster", "decision=new-cluster", "decision=restore-new-cluster"} {
		if strings.Contains(decisions, bad) {
			t.Errorf("the agent logged %q during the handover", bad)
		}
	}
	for _, node := range c.nodes {
		entries, _ := os.ReadDir(c.layout.Nodes[node].path("disk", "var-lib"))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "etcd") && e.Name() != "etcd" {
				t.Errorf("%s: %s beside the data dir: data was moved aside", node, e.Name())
			}
		}
	}
}

// operatorPacemaker writes on both nodes' disks the Pacemaker cluster the cluster-etcd-operator's
// setup job makes on a DualReplica cluster, with the pcs commands it runs (pkg/tnf/pkg/pcs), run
// offline: `pcs cluster setup TNF`, the kubelet clone, etcd through the field's agent
// (ocf:heartbeat:podman-etcd, which Debian's resource-agents predates: created with --force) and
// their constraints. It returns the corosync.conf it wrote.
//
// Where the stack runs (field, field_test.go), the fence devices come too, as the operator's
// fencing job makes them, and three stand-ins replace what a namespace node lacks: the kubelet
// is the stand-in agent (no systemd), podman-etcd's drop_in_dependency is off (it writes systemd
// drop-ins and reloads systemd) and its oom is 0 (a negative score needs CAP_SYS_RESOURCE, which
// the build machines do not give root). etcd is created disabled: the test bootstraps it
// (fieldBootstrap). Elsewhere the agent is never run and the fence devices are left out.
func (c *cluster) operatorPacemaker(field bool) []byte {
	c.t.Helper()
	dir := c.t.TempDir()
	conf, cib := filepath.Join(dir, "corosync.conf"), filepath.Join(dir, "cib.xml")
	c.must("pcs", "cluster", "setup", "TNF", "node1", "addr="+c.ip["node1"], "node2", "addr="+c.ip["node2"], "--corosync_conf", conf)
	c.write(cib, []byte(c.must("cibadmin", "--empty")), 0o600)
	kubelet, etcd := "systemd:kubelet", []string{"drop_in_dependency=true"}
	if field {
		// pcs, run on the host, cannot read the agent's metadata (Debian's resource-agents has
		// no podman-etcd): its operations are given as pcs would copy them from it.
		kubelet, etcd = standInAgent, []string{"drop_in_dependency=false", "oom=0",
			"op", "start", "timeout=600s", "op", "stop", "timeout=90s", "op", "monitor", "interval=" + fieldEtcdMonitor(c.t), "timeout=25s", "--disabled"}
	}
	commands := [][]string{
		{"property", "set", "start-failure-is-fatal=false"},
		{"resource", "create", "kubelet", kubelet, "op", "start", "timeout=180s", "start-delay=15s", "clone", "meta", "interleave=true", "migration-threshold=60", "--force"},
		append(append([]string{"resource", "create", "etcd", "ocf:heartbeat:podman-etcd", "node_ip_map=node1:" + c.ip["node1"] + ";node2:" + c.ip["node2"]}, etcd...),
			"clone", "interleave=true", "notify=true", "meta", "migration-threshold=60", "--force"),
		{"constraint", "order", "kubelet-clone", "then", "etcd-clone"},
		{"constraint", "colocation", "add", "etcd-clone", "with", "kubelet-clone"},
	}
	if field {
		// One fence_redfish per node, the first node's delayed 10 s (the race winner), its
		// certificate unchecked as with certificateVerification Disabled.
		for i, node := range c.nodes {
			commands = append(commands, append([]string{"stonith", "create", node + "_redfish", "fence_redfish"}, c.operatorFenceOptions(i, node)...))
		}
	}
	for _, args := range commands {
		c.must(append([]string{"pcs", "-f", cib}, args...)...)
	}
	confData, cibData := []byte(readFile(conf)), []byte(readFile(cib))
	hacluster, err := user.Lookup("hacluster")
	if err != nil {
		c.t.Fatal(err)
	}
	uid, _ := strconv.Atoi(hacluster.Uid)
	gid, _ := strconv.Atoi(hacluster.Gid)
	key := c.authkey()
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		c.write(n.path("disk", "etc", "corosync", "corosync.conf"), confData, 0o644)
		c.write(n.path("disk", "etc", "corosync", "authkey"), key, 0o400)
		cibDir := n.path("disk", "var-lib", "pacemaker", "cib")
		c.write(filepath.Join(cibDir, "cib.xml"), cibData, 0o600)
		for _, p := range []string{filepath.Join(cibDir, "cib.xml"), cibDir} {
			if err := os.Chown(p, uid, gid); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	return confData
}

// fieldEtcdMonitor is podman-etcd's monitor interval on the field's stack: the agent's own 30 s,
// or TNF_FIELD_ETCD_MONITOR (make bench-field FIELD_ETCD_MONITOR=10s), a tuning a guest could
// make since the operator's jobs never compare the etcd resource's operations.
func fieldEtcdMonitor(t testing.TB) string {
	v := os.Getenv("TNF_FIELD_ETCD_MONITOR")
	if v == "" {
		return "30s"
	}
	if d, err := time.ParseDuration(v); err != nil || d < time.Second {
		t.Fatalf("TNF_FIELD_ETCD_MONITOR=%q: a duration of a second or more", v)
	}
	return v
}

// TestOperatorClusterGuest: on a DualReplica cluster the cluster-etcd-operator's own jobs have
// set Pacemaker up; the layer arrives, its handover service among it. tnfctl setup makes both
// nodes guests, saying why, and writes nothing of the cluster; the handover ends at once and
// never tells the operator anything: the operator's cluster and the installer's etcd go on, and
// the API writer's acknowledged writes are all there.
func TestOperatorClusterGuest(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newInstalledCluster(t)
	conf := c.operatorPacemaker(false)
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitAPIsAndDeliverSecrets()
	etcds := c.registerOperator()
	etcdWrites := c.writing()
	apiWrites := c.startAPIClients("guest", "node1")
	began := time.Now()
	for _, node := range c.nodes {
		n := c.layout.Nodes[node]
		c.waitFor(node+"'s setup makes it a guest, saying why", settle, func() (bool, string) {
			data := readFile(n.path("disk", "var-lib", "tnf", "guest"))
			return strings.Contains(data, "cluster-etcd-operator's two-node jobs"), data
		})
		c.waitFor(node+"'s handover ends at once on a guest", settle, func() (bool, string) {
			log := readFile(n.path("log", "handover.out"))
			return n.daemonPID("handover") == 0 && strings.Contains(log, "none on a guest node"), log
		})
		if _, ok, err := handover.ReadState(n.path("disk", "var-lib", "tnf", "handover.json")); ok || err != nil {
			t.Errorf("%s: a guest's handover recorded a step: %v", node, err)
		}
		if got := readFile(n.path("disk", "etc", "corosync", "corosync.conf")); got != string(conf) {
			t.Errorf("%s: the operator's corosync.conf was changed:\n%s", node, got)
		}
	}
	resources, err := c.run("node1", "cibadmin", "--query", "--scope", "resources")
	if err != nil || !strings.Contains(resources, `type="podman-etcd"`) || strings.Contains(resources, `provider="tnf"`) || strings.Contains(resources, "fence-node") {
		t.Errorf("the CIB's resources are not the operator's alone (%v):\n%s", err, resources)
	}
	if kubeapi.ConditionTrue(etcds, handover.ConditionReady) {
		t.Errorf("%s was set on a guest", handover.ConditionReady)
	}
	c.waitWrites(apiWrites.writer, "the layer a guest, through the API")
	c.t.Logf("while the layer was a guest: longest API write gap %v, etcd's %v", apiWrites.LongestGap(began, time.Now()).Round(time.Millisecond),
		etcdWrites.LongestGap(began, time.Now()).Round(time.Millisecond))
	c.stopAPIClients(apiWrites)
	c.stopAndCheck(etcdWrites)
}

// handOverNode1 is an installed cluster up, the operator told, and node1 handed over while
// node2 still runs the installer's etcd: the middle of the handover. It returns the Etcd
// resource and a writer through etcd.
func (c *cluster) handOverNode1() (dynamic.ResourceInterface, *writer) {
	c.t.Helper()
	c.power("on", "node1")
	c.power("on", "node2")
	c.waitAPIsAndDeliverSecrets()
	c.registerNodes()
	etcds := c.registerOperator()
	c.waitFor("tnf-handover.service set "+handover.ConditionReady, settle, func() (bool, string) {
		return kubeapi.ConditionTrue(etcds, handover.ConditionReady), ""
	})
	w := c.writing()
	c.rollOutWithoutEtcd("node1")
	c.waitAgentServes("node1")
	return etcds, w
}

// waitHandoverTookOut waits until node's tnf-handover.service took the etcd container out of the
// static pod itself, and returns the reason it logged.
func (c *cluster) waitHandoverTookOut(node string) string {
	c.t.Helper()
	var line string
	c.waitFor(node+"'s handover took the installer's etcd out itself", settle, func() (bool, string) {
		for _, l := range strings.Split(readFile(c.layout.Nodes[node].path("log", "handover.out")), "\n") {
			if strings.Contains(l, "took the etcd container out of the static pod here") {
				line = l
				return true, ""
			}
		}
		return false, ""
	})
	return line
}

// TestHandoverAgentNodeLost: in the middle of the handover (node1's etcd the agent's, node2's
// still the installer's), node1 loses its power. The operator rolls nothing out without two
// healthy members, so node2's tnf-handover.service, once node1 is fenced, takes the etcd
// container out itself, and node2's agent serves alone: an ordinary failover. node1 comes back,
// joins, and the handover completes on node2. Every acknowledged write is on both members.
func TestHandoverAgentNodeLost(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newInstalledCluster(t)
	etcds, w := c.handOverNode1()
	c.cutMidHandover("node1", w)
	c.t.Logf("node2: %s", c.waitHandoverTookOut("node2"))
	c.powerBackOn("node1")
	c.waitBothHandedOver(etcds, w)
}

// TestHandoverInstallerNodeLost: in the middle of the handover, node2, whose etcd is still the
// installer's, loses its power. node1 fences it and its agent serves alone (an ordinary
// failover, which removes node2's member). node2 comes back: its installer etcd can never rejoin,
// so its tnf-handover.service takes the container out itself, and its agent joins node1. The
// handover completes; every acknowledged write is on both members.
func TestHandoverInstallerNodeLost(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newInstalledCluster(t)
	etcds, w := c.handOverNode1()
	c.cutMidHandover("node2", w)
	c.powerBackOn("node2")
	c.t.Logf("node2: %s", c.waitHandoverTookOut("node2"))
	c.waitBothHandedOver(etcds, w)
}

// cutMidHandover cuts node's power and waits until the other node fenced it and serves alone;
// it logs when etcd's writes came back.
func (c *cluster) cutMidHandover(node string, w *writer) {
	c.t.Helper()
	survivor := c.other(node)
	cut := time.Now()
	c.power("off", node)
	c.waitFenced(survivor, node, 1)
	c.waitRoles(survivor, map[string]string{survivor: "Promoted"})
	c.waitWrites(w, survivor+" alone")
	back, _ := w.BackAfter(cut)
	c.t.Logf("%s's power cut mid-handover → etcd's writes back after %.1f s", node, back.Sub(cut).Seconds())
}

// waitBothHandedOver waits until both agents serve and the handover completed on both nodes,
// then checks every write w had acknowledged is on both members.
func (c *cluster) waitBothHandedOver(etcds dynamic.ResourceInterface, w *writer) {
	c.t.Helper()
	c.waitRoles("node1", bothPromoted)
	c.waitHandoverCompleted(etcds)
	c.waitWrites(w, "both back")
	c.stopAndCheck(w)
}

// TestHandoverPeerLostBeforeTold: an installed cluster with the layer set up, the operator not
// told yet (its Etcd object is not even there), and node2 loses its power. node1 fences it, as
// its Pacemaker cluster does for any lost node, but nothing fails over: the installer's etcd on
// node1 stays without quorum, as it would without the layer, the agent waits behind it, and the
// handover waits, saying why; no condition is set. node2 comes back, the installer's members
// have quorum again, the operator is told and the handover completes. Every write acknowledged
// before the cut is on both members.
func TestHandoverPeerLostBeforeTold(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newInstalledCluster(t)
	c.upInstalled()
	c.registerNodes()
	w := c.writing()
	c.power("off", "node2")
	// Once the power action returned: a write committed while it ran was legitimate.
	cut := time.Now()
	c.waitFenced("node1", "node2", 1)
	// The handover has not told the operator (its Etcd object is not there), and goes no
	// further with node2 away: it waits at a step before the operator's, saying why.
	c.waitFor("node1's handover waits before the operator is told, saying why", settle, func() (bool, string) {
		st, ok, err := handover.ReadState(c.layout.Nodes["node1"].path("disk", "var-lib", "tnf", "handover.json"))
		early := st.Step == handover.StepSetup || st.Step == handover.StepHealthy || st.Step == handover.StepTold
		return err == nil && ok && early && st.Waiting != "", fmt.Sprint(st, err)
	})
	st, _, _ := handover.ReadState(c.layout.Nodes["node1"].path("disk", "var-lib", "tnf", "handover.json"))
	t.Logf("node1's handover, node2 fenced: waiting for %s: %s", st.Step, st.Waiting)
	_, p, err := c.status("node1")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		if why := n.Attributes[etcdnode.AttrDecision]; n.Name == "node1" && !strings.Contains(why, "installer") {
			t.Errorf("node1's etcd agent, its peer fenced before the handover: %q, want it waiting behind the installer's etcd", why)
		}
	}
	if out, _, err := c.statusRun("node1"); err != nil || !strings.Contains(out, "Handover:  waiting for ") {
		t.Errorf("tnfctl status on node1 (%v) does not say where the handover waits:\n%s", err, out)
	}
	// A write in flight at the cut may still be acknowledged just after it.
	if at, ok := w.FirstAckAfter(cut.Add(time.Second)); ok {
		t.Errorf("etcd acknowledged a write %v after node2's power cut: the installer's member alone has no quorum", at.Sub(cut))
	}
	c.powerBackOn("node2")
	c.waitWrites(w, "node2 back, the installer's members")
	etcds := c.registerOperator()
	c.waitFor("tnf-handover.service set "+handover.ConditionReady, settle, func() (bool, string) {
		return kubeapi.ConditionTrue(etcds, handover.ConditionReady), ""
	})
	for _, node := range c.nodes {
		c.rollOutWithoutEtcd(node)
		c.waitAgentServes(node)
	}
	c.waitBothHandedOver(etcds, w)
	if strings.Contains(c.agentLogs(), "forcing a new cluster of one") {
		t.Error("an agent forced a cluster of one")
	}
}
