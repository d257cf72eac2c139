//go:build integration

package cluster_test

import (
	"archive/tar"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/testca"
)

// OpenShift's own two-node stack on the harness: the Pacemaker cluster the cluster-etcd-operator's
// jobs make (operatorPacemaker), the field's etcd agent podman-etcd run unmodified from
// ../shared/peers (GPL-2.0: it stays there, the node's OCF folder links to it), etcd in podman
// from the operator's pod manifest and certificate paths, fence_redfish with the operator's
// delays. The stand-ins, each because the real one cannot run here:
//   - the etcd image: the etcd and etcdctl the project builds and busybox's true, not the release
//     image;
//   - the kubelet: the stand-in agent (no systemd in a namespace node), so no static pod either;
//   - crictl and oc: crictl lists no pod (there is no kubelet), oc fails at once (there is no
//     API: podman-etcd then adds a learner without asking for a Machine, as it does when the API
//     is down);
//   - jq is gojq: Debian 12's jq 1.6 rounds etcd's 64-bit member IDs, so podman-etcd would
//     promote and remove members that do not exist;
//   - the transition from the installer's etcd: node1's force_new_cluster attribute, set before
//     etcd is enabled, makes the cluster (fieldBootstrap);
//   - revision.json, which the operator's sidecar writes: nothing writes it here, so the paths
//     that compare it (both nodes starting from nothing, a cold boot) are not run.

// fieldImage is the name of the stand-in etcd image in each node's podman storage.
const fieldImage = "localhost/tnf-test/etcd:field"

// podmanEtcd is the field's agent, beside the project's clone.
func podmanEtcd(t testing.TB) string {
	p, err := filepath.Abs("../../../shared/peers/podman-etcd/podman-etcd")
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("OpenShift's podman-etcd agent is read from ../shared/peers beside the clone: %v", err)
	}
	return p
}

// newFieldCluster is a cluster whose nodes run OpenShift's stack: the operator's Pacemaker
// configuration, podman-etcd, etcd in podman over TLS with the operator's certificate names, and
// kube-apiserver on both nodes (etcd's CA issues its client certificate, as the operator's signer
// does); change, when not nil, changes the layer's node configuration (a guest's). The nodes are
// off.
func newFieldCluster(t testing.TB, change func(*clusterconfig.Config)) *cluster {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("the field's stack runs etcd in podman: ci/install-deps.sh installs it")
	}
	if haRoot(t) != "" {
		t.Skip("TNF_HA_ROOT: the field's nodes run podman, which the tree of tools/ha-root has not")
	}
	c := newCluster(t, change)
	for _, name := range c.nodes {
		c.setBMCPassword(name, fieldPassword(c.password(name)))
	}
	c.restartEmulator()
	image := c.fieldImageTar()
	ca, err := testca.New("etcd-signer")
	if err != nil {
		t.Fatal(err)
	}
	certs := map[string][]byte{"configmaps/etcd-all-bundles/server-ca-bundle.crt": ca.PEM()}
	for _, name := range c.nodes {
		for _, kind := range []string{"serving", "peer"} {
			cert, key, err := ca.Issue("system:etcd-"+kind+":"+name, net.ParseIP(c.ip[name]), net.ParseIP("127.0.0.1"))
			if err != nil {
				t.Fatal(err)
			}
			certs["secrets/etcd-all-certs/etcd-"+kind+"-"+name+".crt"] = cert
			certs["secrets/etcd-all-certs/etcd-"+kind+"-"+name+".key"] = key
		}
	}
	agent := podmanEtcd(t)
	host := mountNS(os.Getpid())
	if host == "" {
		t.Fatal("the test's own mount namespace cannot be read: a field node's power-off would not know the test from its containers")
	}
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		n.Field, n.HostMountNS = true, host
		c.layout.Nodes[name] = n
		etcdCerts := n.path("disk", "etc", "kubernetes", "static-pod-resources", "etcd-certs")
		for path, data := range certs {
			c.write(filepath.Join(etcdCerts, path), data, 0o600)
		}
		c.write(filepath.Join(etcdCerts, "configmaps", "external-etcd-pod", "pod.yaml"), c.fieldManifest(name), 0o644)
		c.write(n.path("disk", "var-lib", "kubelet", "config.json"), []byte("{}\n"), 0o600)
		if err := os.MkdirAll(n.path("disk", "var-lib", "etcd"), 0o700); err != nil {
			t.Fatal(err)
		}
		c.podmanConfig(n)
		c.must("podman", "--root", n.path("containers"), "--runroot", n.path("containers-run"), "--storage-driver", "vfs",
			"import", "--quiet", "--change", `ENTRYPOINT ["/usr/local/bin/etcd"]`, "--change", "ENV PATH=/usr/local/bin:/bin", image, fieldImage)
		for path, target := range map[string]string{n.path("ocf", "heartbeat", "podman-etcd"): agent, n.path("sbin", "jq"): "/usr/bin/gojq"} {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}
		c.write(n.path("sbin", "crictl"), []byte("#!/bin/sh\n# stand-in: no kubelet, no pod\nexit 0\n"), 0o755)
		c.write(n.path("sbin", "oc"), []byte("#!/bin/sh\n# stand-in: no API\necho 'oc: no API server on this harness' >&2\nexit 1\n"), 0o755)
	}
	c.writeLayout()
	c.operatorPacemaker(true)
	c.serveAPI(ca)
	return c
}

// setBMCPassword writes node's BMC password where the emulator reads it (taken at its next
// start) and where the layer's nodes keep it, as a fencing Secret's change reaches them. The
// operator's fence devices keep theirs until its fencing job runs again.
func (c *cluster) setBMCPassword(node, pw string) {
	c.write(filepath.Join(c.dir, "bmc", node+".password"), []byte(pw+"\n"), 0o600)
	for _, n := range c.nodes {
		c.write(filepath.Join(c.layout.Nodes[n].Dir, "disk", "etc", "tnf", "secrets", node+".password"), []byte(pw+"\n"), 0o600)
	}
}

// fieldPassword is a BMC password of the layer's scenarios less its tabs: the operator's job puts
// each BMC password in the CIB through pcs, where a tab does not survive (it reads back as
// spaces), and the field's fence devices would fail every monitor.
func fieldPassword(pw string) string { return strings.ReplaceAll(pw, "\t", " ") }

// fieldImageTar writes the stand-in etcd image's root file system as a tar for podman import.
func (c *cluster) fieldImageTar() string {
	c.t.Helper()
	path := filepath.Join(c.dir, "etcd-image.tar")
	f, err := os.Create(path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	w := tar.NewWriter(f)
	files := map[string]string{"usr/local/bin/etcd": testbin.Etcd(c.t), "usr/local/bin/etcdctl": testbin.Path(c.t, "etcdctl"), "bin/true": "/bin/busybox"}
	// The go toolchain here links etcd against the C library: the image carries the libraries
	// ldd names, as the release image carries its own.
	for _, bin := range []string{files["usr/local/bin/etcd"], files["usr/local/bin/etcdctl"]} {
		out, err := exec.Command("ldd", bin).Output()
		if err != nil {
			continue // not dynamically linked
		}
		for _, field := range strings.Fields(string(out)) {
			if strings.HasPrefix(field, "/") {
				files[strings.TrimPrefix(field, "/")] = field
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data, err := os.ReadFile(files[name])
		if err != nil {
			c.t.Fatalf("the stand-in etcd image: %v", err)
		}
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			c.t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, dir := range []string{"tmp/", "var/lib/etcd/", "etc/kubernetes/static-pod-certs/"} {
		if err := w.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// fieldManifest is the operator's external etcd pod manifest of 4.21 (the podman runtime's
// testdata, master-0's) for node, its peer and their addresses, and the stand-in image:
// podman-etcd reads its etcd container's environment (the node's own peer certificate among
// it) and image.
func (c *cluster) fieldManifest(node string) []byte {
	c.t.Helper()
	data, err := os.ReadFile("../../internal/node/etcd/etcdrun/podman/testdata/external-etcd-pod-4.21.json")
	if err != nil {
		c.t.Fatal(err)
	}
	peer := c.nodes[0]
	if peer == node {
		peer = c.nodes[1]
	}
	return []byte(strings.NewReplacer("master-0", node, "master_0", node, "master-1", peer, "master_1", peer,
		"192.0.2.10", c.ip[node], "192.0.2.11", c.ip[peer],
		"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:5f2b8e4c1d9a7e3b6c0f8d2a4e6b9c1d3f5a7e9b2c4d6f8a0e1b3c5d7f9a2b4c", fieldImage).Replace(string(data)))
}

// podmanConfig writes node n's podman configuration on its disk: its own storage (vfs: the
// node's /var/lib is an overlay, which overlay storage cannot sit on), runc (crun refuses the
// build machines' mix of cgroup v1 and v2), limits no higher than the host's (root may not raise
// them there, and runc is refused even the host's own process limit: 4096 is ample for etcd),
// logs in files (no journald).
func (c *cluster) podmanConfig(n nodeSetup) {
	c.t.Helper()
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		c.t.Fatal(err)
	}
	nproc := unix.Rlimit{Max: 4096}
	c.write(n.path("disk", "etc", "containers", "storage.conf"), []byte(fmt.Sprintf(
		"[storage]\ndriver = \"vfs\"\nrunroot = \"/run/containers/storage\"\ngraphroot = %q\n", n.path("containers"))), 0o644)
	c.write(n.path("disk", "etc", "containers", "containers.conf"), []byte(fmt.Sprintf(
		"[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\nlog_driver = \"k8s-file\"\n\n[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
		nofile.Max, nofile.Max, nproc.Max, nproc.Max)), 0o644)
}

// field says whether the cluster runs OpenShift's stack (newFieldCluster).
func (c *cluster) field() bool { return c.layout.Nodes[c.nodes[0]].Field }

// fieldUp boots both nodes of a field cluster, makes the first etcd cluster and waits until both
// API servers are ready.
func (c *cluster) fieldUp() {
	c.t.Helper()
	c.power("on", "node1")
	c.power("on", "node2")
	c.fieldBootstrap()
	for _, n := range c.nodes {
		c.waitAPIReady(n)
	}
}

// fieldBootstrap makes the first etcd cluster as the stand-in for the installer's: node1 holds
// force_new_cluster when etcd is enabled, starts a cluster of one and adds node2 as a learner;
// podman-etcd promotes it. It returns once both are voters.
func (c *cluster) fieldBootstrap() {
	c.t.Helper()
	c.waitFor("node1's attribute daemon takes force_new_cluster", settle, func() (bool, string) {
		out, err := c.run("node1", "crm_attribute", "--lifetime", "reboot", "--node", "node1", "--name", "force_new_cluster", "--update", "node1")
		return err == nil, out
	})
	if out, err := c.run("node1", "pcs", "resource", "enable", "etcd"); err != nil {
		c.t.Fatalf("pcs resource enable etcd: %v: %s", err, out)
	}
	c.waitVoters()
}

// waitBothServing waits until etcd serves on both nodes, seen from node from: both Promoted under
// the layer's agent; both voters on the field's stack, whose etcd clone has no promoted role.
func (c *cluster) waitBothServing(from string) {
	c.t.Helper()
	if c.field() {
		c.waitVoters()
		return
	}
	c.waitRoles(from, bothPromoted)
}

// fieldRejoin bounds the field's stack's return to two voters: podman-etcd's start waits up to
// 60 s for its ports' TIME-WAIT sockets (once past it, the start fails and is retried), and its
// learner is promoted at a monitor, every 30 s. Beside other scenarios a rejoin took 2 min 43 s.
const fieldRejoin = 8 * time.Minute

// waitVoters waits until etcd has two started voting members, as seen from node1.
func (c *cluster) waitVoters() {
	c.t.Helper()
	c.waitFor("etcd has two voters", fieldRejoin, func() (bool, string) {
		cli, err := c.newEtcdClient("node1")
		if err != nil {
			return false, err.Error()
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := cli.MemberList(ctx)
		if err != nil {
			return false, err.Error()
		}
		voters := 0
		for _, m := range resp.Members {
			if !m.IsLearner && m.Name != "" {
				voters++
			}
		}
		return voters == 2, fmt.Sprint(resp.Members)
	})
}

// TestFieldPowerCut: OpenShift's own stack on the harness, node2 (the race loser) loses its power
// while a client writes through both endpoints. podman-etcd on node1 finds its member without a
// leader, forces a cluster of one once node2 is fenced, and adds node2 back as a learner when the
// fence's reboot brings it up; it is promoted again. Every acknowledged write is on both.
func TestFieldPowerCut(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newFieldCluster(t, nil)
	c.fieldUp()
	w := c.writing()
	began := time.Now()
	c.power("off", "node2")
	c.waitWrites(w, "node2's power cut")
	c.t.Logf("node2's power cut: writes unavailable for %v", w.LongestGap(began, time.Now()).Round(10*time.Millisecond))
	c.waitBooted("node2")
	c.waitVoters()
	c.stopAndCheck(w)
}

// BenchmarkFieldFailover: BenchmarkClusterFailover's faults, probes and figures on OpenShift's own
// stack (newFieldCluster) on the same harness, but for the restart's split into the agent's part
// and etcd's election, which the layer's logs date. Between runs the victim comes back and both
// members are voters again. Runs per fault: TNF_FIELD_RUNS (default 10). make bench-field.
func BenchmarkFieldFailover(b *testing.B) {
	benchFailovers(b, "TNF_FIELD_RUNS", upFieldCluster)
}

// BenchmarkFieldEtcdFault: BenchmarkEtcdFault's faults on OpenShift's own stack: etcd's process
// in its container killed or frozen, the kubelet killed (the operator orders etcd after it).
// Runs per fault: TNF_FIELD_RUNS. make bench-field.
func BenchmarkFieldEtcdFault(b *testing.B) {
	benchProcessFaults(b, "TNF_FIELD_RUNS", upFieldCluster, etcdFaults())
}

// BenchmarkFieldPlannedReboot: BenchmarkPlannedReboot's clean reboots on OpenShift's own stack,
// each node in turn while its member leads and while it follows (Pacemaker stops podman-etcd,
// which leaves the member list; its start adds the member back as a learner). Runs per role:
// TNF_FIELD_RUNS. make bench-field.
func BenchmarkFieldPlannedReboot(b *testing.B) {
	benchPlannedReboots(b, upFieldCluster(b), runsFromEnv(b, "TNF_FIELD_RUNS"))
}

// upFieldCluster is a field cluster, both nodes serving.
func upFieldCluster(b *testing.B) *cluster {
	c := newFieldCluster(b, nil)
	c.fieldUp()
	return c
}
