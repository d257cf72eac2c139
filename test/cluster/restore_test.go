//go:build integration

package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/testproc"
)

// backupDir is where the scenarios keep snapshots on a node: outside the etcd data dir, as
// operate.md says.
const backupDir = "/var/lib/tnf-test-backup"

// restoreLimit bounds one tnfctl restore: both stops, the restore, the restored member's start and
// the peer's join.
const restoreLimit = 10 * time.Minute

// saveSnapshot takes a snapshot on node as operate.md's backup does (etcdctl snapshot save with
// etcd's client certificate, the snapshot outside the data dir) and returns its path on the node.
func (c *cluster) saveSnapshot(node, name string) string {
	c.t.Helper()
	path := filepath.Join(backupDir, name)
	if out, err := c.run(node, "mkdir", "-p", backupDir); err != nil {
		c.t.Fatalf("mkdir %s: %v\n%s", backupDir, err, out)
	}
	out, err := c.run(node, filepath.Join(c.bin, "etcdctl"), "--endpoints", c.etcdURL(node), "--cacert", pkiDir+"/ca.crt",
		"--cert", pkiDir+"/etcd-client.crt", "--key", pkiDir+"/etcd-client.key", "snapshot", "save", path)
	if err != nil {
		c.t.Fatalf("etcdctl snapshot save on %s: %v\n%s", node, err, out)
	}
	return path
}

// hostPath is where a file of node's /var/lib lies on the test's host.
func (c *cluster) hostPath(node, path string) string {
	return c.layout.Nodes[node].path("disk", "var-lib", strings.TrimPrefix(path, "/var/lib/"))
}

// restore runs tnfctl restore on node with args.
func (c *cluster) restore(node string, args ...string) (string, error) {
	return c.runWithin(node, restoreLimit, nil, append([]string{c.tnfctlPath(node), "restore"}, args...)...)
}

// foreignSnapshot is a snapshot of another etcd cluster (a lone member named elsewhere, on the
// test's loopback), put on node.
func (c *cluster) foreignSnapshot(node string) string {
	c.t.Helper()
	dir := c.t.TempDir()
	client, peer := "http://127.0.0.1:"+freePort(c.t), "http://127.0.0.1:"+freePort(c.t)
	stop := testproc.Start(c.t, filepath.Join(dir, "etcd.log"), testbin.Etcd(c.t), "--name", "elsewhere", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "elsewhere="+peer)
	defer stop()
	file := filepath.Join(dir, "snapshot.db")
	c.waitFor("the other cluster's etcd saves a snapshot", time.Minute, func() (bool, string) {
		out, err := exec.Command(filepath.Join(c.bin, "etcdctl"), "--endpoints", client, "snapshot", "save", file).CombinedOutput()
		return err == nil, string(out)
	})
	data, err := os.ReadFile(file)
	if err != nil {
		c.t.Fatal(err)
	}
	path := filepath.Join(backupDir, "elsewhere.db")
	c.write(c.hostPath(node, path), data, 0o600)
	return path
}

// restoreRecord is the restore the CIB records, read through tnfctl status on node.
func (c *cluster) restoreRecord(node string) (*etcdnode.Restore, error) {
	var st struct {
		Configuration struct {
			Properties map[string]string `json:"properties"`
		} `json:"configuration"`
	}
	if err := c.decodeStatus(node, &st); err != nil {
		return nil, err
	}
	v := st.Configuration.Properties[etcdnode.PropRestore]
	if v == "" {
		return nil, nil
	}
	r, err := etcdnode.ParseRestore(v)
	return &r, err
}

// TestRestore: a snapshot taken as operate.md's backup takes it, while etcd's own client and the
// API take writes; then more writes. tnfctl restore on node1 refuses, stopping nothing, a snapshot
// cut short, one of another cluster, and a run without --yes and without a terminal; one that
// gives up while node2's etcd stops is aborted (abortRestore); with --yes it restores while the
// writers go on. Afterwards both members hold the snapshot's writes and none
// of those acknowledged after it, then the writes after the restore, both are voters, nobody was
// fenced, both nodes' old data is on their disks, both serve revisions past the bump; through the
// API, both informers listed again at most once, saw no resourceVersion go back and hold none of
// the objects written after the snapshot, kube-apiserver serves writes again, and status is
// healthy on both nodes. Run again, the restore does nothing.
func TestRestore(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	w := c.upWithAPIAndWriting()
	api := c.startAPIClients("restore", "node1")
	kept, keptAPI := w.Acked(), api.Acked()
	snapshot := c.saveSnapshot("node1", "snapshot.db")
	afterSnapshot, afterSnapshotAPI := len(w.Acked()), len(api.Acked())
	c.waitWrites(w, "after the snapshot")
	c.waitWrites(api.writer, "after the snapshot, through node1's API")

	data, err := os.ReadFile(c.hostPath("node1", snapshot))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(backupDir, "short.db")
	c.write(c.hostPath("node1", short), data[:len(data)/2], 0o600)
	for _, refusal := range []struct {
		args []string
		code int // 3: refused; 1: not asked (as every command that asks, without a terminal)
		says string
	}{
		{[]string{short, "--yes"}, 3, "no integrity hash"},
		{[]string{c.foreignSnapshot("node1"), "--yes"}, 3, "none of this cluster's nodes"},
		{[]string{snapshot}, 1, "pass --yes"},
	} {
		out, err := c.restore("node1", refusal.args...)
		if !exitedWith(err, refusal.code) || !strings.Contains(out, refusal.says) {
			t.Fatalf("tnfctl restore %s: %v, want exit %d saying %q\n%s", strings.Join(refusal.args, " "), err, refusal.code, refusal.says, out)
		}
		if r, err := c.restoreRecord("node1"); err != nil || r != nil {
			t.Fatalf("after a refused restore, a restore is recorded: %+v, %v", r, err)
		}
	}
	c.waitRoles("node1", bothPromoted)
	c.abortRestore(snapshot)

	lost, lostAPI := w.Acked()[afterSnapshot:], api.Acked()[afterSnapshotAPI:]
	began := time.Now()
	out, err := c.restore("node1", snapshot, "--yes")
	if err != nil {
		t.Fatalf("tnfctl restore: %v\n%s", err, out)
	}
	t.Logf("tnfctl restore on node1 (%v):\n%s", time.Since(began).Round(time.Second), out)
	restored := len(w.Acked())
	c.waitWrites(w, "after the restore")
	c.waitWrites(api.writer, "after the restore, through node1's API")
	c.waitRoles("node1", bothPromoted)
	after := w.Stop()[restored:]
	c.waitSameData()
	for _, n := range c.nodes {
		c.checkAcked(kept, n)
		c.checkAcked(after, n)
		if got := c.missing(lost, n); got != len(lost) {
			t.Errorf("%s holds %d of the %d writes acknowledged after the snapshot, before the restore", n, len(lost)-got, len(lost))
		}
		if copies, _ := filepath.Glob(c.hostPath(n, "/var/lib/etcd") + ".moved-*"); len(copies) == 0 {
			t.Errorf("%s's data before the restore is not kept beside its data dir", n)
		}
	}
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.etcdClient(c.nodes...).Get(ctx, "probe")
	if err != nil || resp.Header.Revision <= etcddata.RevisionBump {
		t.Errorf("after the restore etcd serves revision %v (%v), want past the bump %d", resp.Header, err, int64(etcddata.RevisionBump))
	}
	c.checkAPIAfterRestore(api, keptAPI, lostAPI)
	for _, n := range c.nodes {
		c.waitState(n, string(health.Healthy))
	}
	if r, err := c.restoreRecord("node2"); err != nil || r == nil || r.UnderWay() {
		t.Errorf("the restore's record after it ended: %+v, %v", r, err)
	}
	if out, err := c.restore("node1", snapshot, "--yes"); err != nil || !strings.Contains(out, "nothing to do") {
		t.Errorf("tnfctl restore run again: %v\n%s", err, out)
	}
}

// abortRestore runs a restore on node1 whose wait for node2's etcd to stop gives up at once,
// then aborts it: refused on node2 while node1 is a member, done on node1. etcd is back in
// Pacemaker's hands on both nodes and no restore is recorded.
func (c *cluster) abortRestore(snapshot string) {
	c.t.Helper()
	out, err := c.restore("node1", snapshot, "--yes", "--timeout", "1ms")
	if !exitedWith(err, 1) || !strings.Contains(out, "waiting for etcd to stop on node2") {
		c.t.Fatalf("tnfctl restore --timeout 1ms: %v, want it to give up waiting for node2's stop\n%s", err, out)
	}
	if out, err := c.restore("node2", "--abort"); !exitedWith(err, 3) || !strings.Contains(out, "abort it there") {
		c.t.Fatalf("tnfctl restore --abort on node2: %v, want exit 3\n%s", err, out)
	}
	if out, err := c.restore("node1", "--abort"); err != nil || !strings.Contains(out, "aborting the restore on node1 at step stopping") {
		c.t.Fatalf("tnfctl restore --abort on node1: %v\n%s", err, out)
	}
	if r, err := c.restoreRecord("node2"); err != nil || r != nil {
		c.t.Fatalf("after the abort, a restore is recorded: %+v, %v", r, err)
	}
	c.waitRoles("node1", bothPromoted)
	if out, err := c.restore("node1", "--abort"); !exitedWith(err, 3) || !strings.Contains(out, "no restore is under way") {
		c.t.Fatalf("tnfctl restore --abort with none under way: %v, want exit 3\n%s", err, out)
	}
}

// checkAPIAfterRestore checks the API's clients after a restore: the writer's objects
// acknowledged before the snapshot (kept) are there, none of those after it (lost), and each
// informer listed again at most once, in order, and holds exactly what the API lists.
func (c *cluster) checkAPIAfterRestore(a *apiClients, kept, lost []string) {
	c.t.Helper()
	acked := a.Stop()
	reads, stale := a.reader.Stop()
	if len(stale) > 0 {
		c.t.Errorf("node1's API served stale reads: %v", stale)
	}
	var listed map[string]bool
	c.waitFor("node1's API lists what the restore kept", time.Minute, func() (bool, string) {
		list, err := c.apiClient("node1").CoreV1().ConfigMaps(apiNamespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		listed = map[string]bool{}
		for _, cm := range list.Items {
			listed[cm.Name] = true
		}
		return true, ""
	})
	for _, key := range kept {
		if !listed[a.object(key)] {
			c.t.Errorf("%s, acknowledged before the snapshot, is not in the API after the restore", a.object(key))
		}
	}
	for _, key := range lost {
		if listed[a.object(key)] {
			c.t.Errorf("%s, acknowledged after the snapshot, came back with the restore", a.object(key))
		}
	}
	for _, n := range c.nodes {
		w := a.watchers[n]
		c.waitFor(n+"'s informer holds what the API lists", time.Minute, func() (bool, string) {
			held := map[string]bool{}
			for _, obj := range w.store.List() {
				held[obj.(*corev1.ConfigMap).Name] = true
			}
			return fmt.Sprint(held) == fmt.Sprint(listed), fmt.Sprintf("%d held, %d listed", len(held), len(listed))
		})
		w.Stop()
		w.mu.Lock()
		if relists := max(w.lists-1, 0); relists > 1 {
			c.t.Errorf("%s's informer listed again %d times, want at most once", n, relists)
		}
		if len(w.backwards) > 0 {
			c.t.Errorf("%s's informer saw resourceVersions go back: %v", n, w.backwards)
		}
		c.t.Logf("%s's informer: %d relists, %d objects", n, max(w.lists-1, 0), len(listed))
		w.mu.Unlock()
	}
	c.t.Logf("through node1's API: %d acknowledged, %d reads, %d kept from the snapshot, %d given up", len(acked), reads, len(kept), len(lost))
}

// TestRestoreResumes: a restore that stops at each of its steps (as a crash there would), while
// both nodes' status says where it stands and a restore begun on the peer is refused, then loses
// the power of either node, is run again once that node is back and ends as a whole one does:
// both members voters of the restored cluster, holding the snapshot's writes, the restore
// recorded as done, nobody fenced but the node whose power was cut.
// make cluster-test runs it, not CI: its six cases take 84 to 107 s each, and CI's budget is
// spent (TestRestore runs there).
func TestRestoreResumes(t *testing.T) {
	onlyInClusterTest(t)
	for _, step := range etcdnode.RestoreSteps {
		for _, cut := range []string{"node1", "node2"} {
			t.Run(step+"/"+cut, func(t *testing.T) {
				t.Parallel()
				c := newAPICluster(t, nil)
				c.restoreCut(step, cut)
			})
		}
	}
}

// restoreCut takes a snapshot while writing, writes on, runs tnfctl restore on node1 until it has
// recorded step, cuts cut's power, powers it on and runs the restore again.
func (c *cluster) restoreCut(step, cut string) {
	c.t.Helper()
	w := c.upWithAPIAndWriting()
	kept := w.Acked()
	snapshot := c.saveSnapshot("node1", "snapshot.db")
	c.waitWrites(w, "after the snapshot")
	out, err := c.restore("node1", snapshot, "--yes", "--stop-at", step)
	if err == nil || !strings.Contains(out, "stopped as asked") {
		c.t.Fatalf("tnfctl restore --stop-at %s: %v\n%s", step, err, out)
	}
	// The same snapshot on node2: a restore there is refused while node1's stands recorded.
	data, err := os.ReadFile(c.hostPath("node1", snapshot))
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(c.hostPath("node2", snapshot), data, 0o600)
	if out, err := c.restore("node2", snapshot, "--yes"); !exitedWith(err, 3) || !strings.Contains(out, "tnfctl restore runs on node1") {
		c.t.Fatalf("tnfctl restore on node2 while node1's is at %s: %v, want exit 3\n%s", step, err, out)
	}
	// Both nodes' status says where the restore stands.
	for _, n := range c.nodes {
		out, _, err := c.statusRun(n, "-o", "json")
		state, r, derr := restoreStatus([]byte(out))
		if err != nil || derr != nil || state != string(health.Restoring) || r == nil || r.Step != step || r.Node != "node1" {
			c.t.Fatalf("tnfctl status -o json on %s after the stop at %s: %s, %+v (%v, %v)\n%s", n, step, state, r, err, derr, out)
		}
	}
	c.power("off", cut)
	c.waitFenced(c.other(cut), cut, 1)
	c.power("on", cut)
	c.waitFor(cut+" back in Corosync", settle, func() (bool, string) {
		m, _, err := c.status(c.other(cut))
		return err == nil && m.Nodes[cut], fmt.Sprint(m.Nodes, err)
	})
	if out, err = c.restore("node1", snapshot, "--yes"); err != nil || !strings.Contains(out, "resuming") {
		c.t.Fatalf("tnfctl restore run again: %v\n%s", err, out)
	}
	c.waitRoles("node1", bothPromoted)
	w.Stop()
	c.waitSameData()
	for _, n := range c.nodes {
		c.checkAcked(kept, n)
	}
	if r, err := c.restoreRecord("node2"); err != nil || r == nil || r.UnderWay() {
		c.t.Errorf("the restore's record after it ended: %+v, %v", r, err)
	}
	c.assertFenced(c.other(cut), map[string]int{cut: 1, c.other(cut): 0})
}

// restoreStatus is what tnfctl status -o json says of a restore: the state, and the restore
// under way.
func restoreStatus(out []byte) (string, *etcdnode.Restore, error) {
	var st struct {
		State   string            `json:"state"`
		Restore *etcdnode.Restore `json:"restore"`
	}
	err := json.NewDecoder(bytes.NewReader(out)).Decode(&st)
	return st.State, st.Restore, err
}

// assetsDir stands in for the stock scripts' ASSET_DIR (/home/core/assets), on the node's disk.
const assetsDir = "/var/lib/tnf-test-assets"

// handOver brings an installed cluster up and hands etcd over from the installer's on both
// nodes, as TestHandover does, writing throughout.
func (c *cluster) handOver() *writer {
	c.t.Helper()
	etcds, w := c.handOverNode1()
	c.rollOutWithoutEtcd("node2")
	c.waitAgentServes("node2")
	c.waitHandoverCompleted(etcds)
	c.waitRoles("node1", bothPromoted)
	return w
}

// TestStockRestoreScriptRefused: on a cluster handed over from the installer's etcd, node1 is
// given what OpenShift's quorum-restore.sh does there: the operator's etcd-pod.yaml moved to the
// script's manifests-stopped, its restore pod (etcd --force-new-cluster on the data dir) written
// in its place. tnfctl static-pod-guard, as its path unit runs it, moves the pod out, keeps it
// and records it: status and tnf_second_etcd_refused say so. Then node1's etcd dies: node2 forces
// a cluster of one, and nothing else serves on node1 (no second etcd: the kubelet has no pod to
// run, and the agent takes the missing manifest for the installer's). The runbook's steps (the
// operator's manifest back, --forget) bring node1 back as a voter; no write acknowledged is lost
// and nobody is fenced.
// make cluster-test runs it, not CI: CI's whole run had come to 4116 s of its 2700.
func TestStockRestoreScriptRefused(t *testing.T) {
	onlyInClusterTest(t)
	t.Parallel()
	c := newInstalledCluster(t)
	w := c.handOver()
	var pod corev1.Pod
	if err := json.Unmarshal(c.installerPod("node1", true), &pod); err != nil {
		t.Fatal(err)
	}
	for i, ctr := range pod.Spec.Containers {
		if ctr.Name == "etcd" {
			pod.Spec.Containers[i].Args = append(pod.Spec.Containers[i].Args, "--force-new-cluster")
		}
	}
	restorePod, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	stopped := assetsDir + "/manifests-stopped"
	script := fmt.Sprintf("mkdir -p %[1]s && mv %[2]s %[1]s/ && cat > %[2]s", stopped, etcdnode.DefaultStaticPodManifest)
	if out, err := c.runInput("node1", bytes.NewReader(restorePod), "sh", "-c", script); err != nil {
		t.Fatalf("the stock script's steps: %v\n%s", err, out)
	}
	out, err := c.tnfctl("node1", "static-pod-guard")
	if err != nil || !strings.Contains(out, "refused: "+etcdnode.DefaultStaticPodManifest+" runs an etcd container") {
		t.Fatalf("tnfctl static-pod-guard: %v\n%s", err, out)
	}
	if _, err := os.Stat(c.layout.Nodes["node1"].path("disk", strings.TrimPrefix(etcdnode.DefaultStaticPodManifest, "/"))); !os.IsNotExist(err) {
		t.Errorf("the restore pod is still in the kubelet's folder: %v", err)
	}
	if kept, _ := filepath.Glob(c.hostPath("node1", "/var/lib/tnf/refused-static-pods") + "/etcd-pod.yaml.*"); len(kept) != 1 || !bytes.Equal([]byte(readFile(kept[0])), restorePod) {
		t.Errorf("the refused pod is not kept whole: %v", kept)
	}
	status, _, err := c.statusRun("node1")
	if err != nil || !strings.Contains(status, "SECOND ETCD REFUSED: "+etcdnode.DefaultStaticPodManifest) {
		t.Errorf("tnfctl status on node1 (%v):\n%s", err, status)
	}
	c.waitSecondEtcdSeries(1)

	pids := c.etcdPIDs("node1")
	if len(pids) != 1 {
		t.Fatalf("node1 runs %d etcd processes, want Pacemaker's alone: %v", len(pids), pids)
	}
	c.signal("node1", pids[0], unix.SIGKILL)
	c.waitWrites(w, "node2 alone")
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		if pids := c.etcdPIDs("node1"); len(pids) > 0 {
			t.Fatalf("an etcd runs on node1 beside node2's cluster of one: %v", pids)
		}
	}
	if out, err := c.run("node1", "mv", stopped+"/etcd-pod.yaml", etcdnode.DefaultStaticPodManifest); err != nil {
		t.Fatalf("putting the operator's manifest back: %v\n%s", err, out)
	}
	if out, err := c.tnfctl("node1", "static-pod-guard", "--forget"); err != nil {
		t.Fatalf("tnfctl static-pod-guard --forget: %v\n%s", err, out)
	}
	c.waitRoles("node1", bothPromoted)
	c.waitSecondEtcdSeries(0)
	c.stopAndCheck(w)
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
}

// waitSecondEtcdSeries waits until node1's metrics count n refused manifests.
func (c *cluster) waitSecondEtcdSeries(n int) {
	c.t.Helper()
	want := fmt.Sprintf(`tnf_second_etcd_refused{node="node1"} %d`, n)
	c.waitFor("node1: "+want, time.Minute, func() (bool, string) {
		series, err := c.seriesOf("node1", "tnf_second_etcd_refused")
		return err == nil && slices.Contains(series, want), fmt.Sprint(series, err)
	})
}

// TestRestoreBeforeHandover: a snapshot taken while only node1 was handed over (the operator
// told, its Etcd object without ExternalEtcdHasCompletedTransition) is refused once the handover
// is done, naming --before-handover and stopping nothing. With it, and the node's recovery
// credential, the restore restores it; stopped as a crash would at its last step, which status
// shows, and run again, it resumes and sets both of the handover's conditions again once the API
// answers: the Etcd object records the handover, both members are voters holding the
// writes after the restore, nobody was fenced, and status is healthy on both nodes.
func TestRestoreBeforeHandover(t *testing.T) {
	t.Parallel()
	onlyInClusterTest(t)
	c := newInstalledCluster(t)
	etcds, w := c.handOverNode1()
	if kubeapi.ConditionTrue(etcds, handover.ConditionCompleted) {
		t.Fatalf("%s is set with node2's etcd still the installer's", handover.ConditionCompleted)
	}
	snapshot := c.saveSnapshot("node1", "before-handover.db")
	c.rollOutWithoutEtcd("node2")
	c.waitAgentServes("node2")
	c.waitHandoverCompleted(etcds)
	c.waitRoles("node1", bothPromoted)

	out, err := c.restore("node1", snapshot, "--yes")
	if !exitedWith(err, 3) || !strings.Contains(out, "does not record the handover as completed") || !strings.Contains(out, "--before-handover") {
		t.Fatalf("tnfctl restore of a snapshot from before the handover: %v, want it refused naming --before-handover\n%s", err, out)
	}
	if r, err := c.restoreRecord("node1"); err != nil || r != nil {
		t.Fatalf("after a refused restore, a restore is recorded: %+v, %v", r, err)
	}
	recovery := c.adminKubeconfig("node1", recoveryKubeconfig)
	out, err = c.restore("node1", snapshot, "--yes", "--before-handover", "--kubeconfig", recovery, "--stop-at", etcdnode.RestoreHandover)
	if err == nil || !strings.Contains(out, "The snapshot is from before the handover") || !strings.Contains(out, "stopped as asked") {
		t.Fatalf("tnfctl restore --before-handover --stop-at %s: %v\n%s", etcdnode.RestoreHandover, err, out)
	}
	t.Logf("tnfctl restore --before-handover on node1, stopped at its last step:\n%s", out)
	status, _, err := c.statusRun("node1", "-o", "json")
	if state, r, derr := restoreStatus([]byte(status)); err != nil || derr != nil || state != string(health.Restoring) || r == nil || r.Step != etcdnode.RestoreHandover {
		t.Fatalf("tnfctl status -o json after the stop at %s: %s, %+v (%v, %v)\n%s", etcdnode.RestoreHandover, state, r, err, derr, status)
	}
	// The snapshot's Etcd object is what the API serves now: the condition is not in it at all.
	var restoredStatus string
	c.waitFor("the restored Etcd object through node1's API", settle, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		u, err := etcds.Get(ctx, handover.EtcdName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		restoredStatus = fmt.Sprint(u.Object["status"])
		return true, ""
	})
	if strings.Contains(restoredStatus, handover.ConditionCompleted) {
		t.Errorf("the Etcd object restored from before the handover has %s: %s", handover.ConditionCompleted, restoredStatus)
	}
	// Resumed, the restore needs no --before-handover again: its record says it re-asserts.
	out, err = c.restore("node1", snapshot, "--yes", "--kubeconfig", recovery)
	if err != nil || !strings.Contains(out, "resuming") || !strings.Contains(out, "the Etcd object records the handover again") {
		t.Fatalf("tnfctl restore run again: %v\n%s", err, out)
	}
	t.Logf("tnfctl restore run again on node1:\n%s", out)
	restored := len(w.Acked())
	c.waitWrites(w, "after the restore")
	c.waitRoles("node1", bothPromoted)
	for _, cond := range []string{handover.ConditionReady, handover.ConditionCompleted} {
		c.waitFor(cond+" in the restored Etcd object", settle, func() (bool, string) { return kubeapi.ConditionTrue(etcds, cond), "" })
	}
	after := w.Stop()[restored:]
	c.waitSameData()
	for _, n := range c.nodes {
		c.checkAcked(after, n)
	}
	c.assertFenced("node1", map[string]int{"node1": 0, "node2": 0})
	if r, err := c.restoreRecord("node2"); err != nil || r == nil || r.UnderWay() || !r.ReassertHandover {
		t.Errorf("the restore's record after it ended: %+v, %v", r, err)
	}
	for _, n := range c.nodes {
		c.waitState(n, string(health.Healthy))
	}
}
