//go:build boot

package boot_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
	"github.com/tnf-layer/tnf-layer/internal/testutil/bootdisk"
	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// What the installed disk adds to the podman one: the stand-in kubelet and its static pod.
const (
	kubeletStandIn = "/usr/local/libexec/tnf-lab/tnf-kubelet-standin"
	// staticPodStandIn puts this node's static pod manifest in place on its first boot, as the
	// installer left it; later boots keep what the operator's rollout wrote.
	staticPodStandIn = "tnf-lab-static-pod.service"
	staticPods       = "/var/lib/tnf-lab/static-pod"
	// The operator's revision the installer left, whose folder every installed node holds.
	installedRevision = "2"
	guestAPI          = "127.0.0.1:6443" // where the guests reach the test's kube-apiserver
)

// installedDisk is the podman disk as the installer leaves a node once the layer arrives: the
// cluster-etcd-operator's static pod manifest whose etcd container is the installer's member
// (its data in /var/lib/etcd, its certificates where the operator puts them), run by a stand-in
// kubelet once Pacemaker starts kubelet.service.
func (img *labImage) installedDisk(t testing.TB) string {
	img.podmanDisk(t)
	img.installedOnce.Do(func() { img.installed, img.installedErr = img.makeInstalledDisk() })
	if img.installedErr != nil {
		t.Fatal(img.installedErr)
	}
	return img.installed
}

func (img *labImage) makeInstalledDisk() (string, error) {
	began := time.Now()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(img.rootfs, kubeletStandIn), "./test/kubeletstandin/cmd/tnf-kubelet-standin")
	build.Dir, build.Env = img.repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the stand-in kubelet: %v: %s", err, out)
	}
	for _, n := range nodeNames {
		pod, err := json.Marshal(installerPod(n, img.nodeIPs, true))
		if err != nil {
			return "", err
		}
		if err := writeRoot(img.rootfs, staticPods+"/"+n+".json", pod, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Join(img.rootfs, "etc/kubernetes/static-pod-resources/etcd-pod-"+installedRevision), 0o755); err != nil {
		return "", err
	}
	// LAB ONLY: the lab base's kubelet stand-in runs a sleep; this one runs the static pod's etcd.
	dropIn := "[Service]\nExecStart=\nExecStart=" + kubeletStandIn + " " + etcdnode.DefaultStaticPodManifest + "\n"
	if err := writeRoot(img.rootfs, "/etc/systemd/system/kubelet.service.d/20-tnf-lab-standin.conf", []byte(dropIn), 0o644); err != nil {
		return "", err
	}
	unit := fmt.Sprintf(`[Unit]
Description=Stand-in for the installer (boot tests): this node's etcd static pod, once
Before=pacemaker.service tnf-installer-kubelet.service
ConditionPathExists=!%s

[Service]
Type=oneshot
ExecStart=/usr/bin/install -D -m 0644 %s/%%H.json %s

[Install]
WantedBy=multi-user.target
`, etcdnode.DefaultStaticPodManifest, staticPods, etcdnode.DefaultStaticPodManifest)
	if err := writeRoot(img.rootfs, "/etc/systemd/system/"+staticPodStandIn, []byte(unit), 0o644); err != nil {
		return "", err
	}
	if err := os.Symlink("../"+staticPodStandIn, filepath.Join(img.rootfs, "etc/systemd/system/multi-user.target.wants", staticPodStandIn)); err != nil && !os.IsExist(err) {
		return "", err
	}
	disk := filepath.Join(img.dir, "lab-installed.raw")
	if err := bootdisk.MakeExt4(context.Background(), img.rootfs, disk, 4<<30, "root"); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "boot tests: installed variant's disk made in %v\n", time.Since(began).Round(time.Second))
	return disk, nil
}

// installerPod is node's static pod as the operator's installer writes it (kubeletstandin): its
// etcd container runs the layer's etcd binary with the flags the operator's script gives it, on
// the certificates of addOperatorEtcdFiles.
func installerPod(node string, ips map[string]string, withEtcd bool) corev1.Pod {
	cert := func(kind string) string { return fmt.Sprintf("%s/etcd-%s-%s", etcdAllCerts, kind, node) }
	peerURL := func(n string) string { return "https://" + ips[n] + ":2380" }
	spec := etcdrun.Spec{Name: node, DataDir: "/var/lib/etcd", ClientURLs: []string{"https://" + ips[node] + ":2379"},
		ListenClientURLs: []string{"https://0.0.0.0:2379"}, PeerURL: peerURL(node),
		InitialCluster: map[string]string{"node1": peerURL("node1"), "node2": peerURL("node2")}, ClusterState: "new",
		TLS: &etcdrun.TLS{CertFile: cert("serving") + ".crt", KeyFile: cert("serving") + ".key", TrustedCAFile: etcdCABundle,
			PeerCertFile: cert("peer") + ".crt", PeerKeyFile: cert("peer") + ".key", PeerTrustedCAFile: etcdCABundle},
		ExtraArgs: []string{"--initial-cluster-token=installer", "--heartbeat-interval=100", "--election-timeout=1000"}}
	return kubeletstandin.InstallerPod(spec, "/usr/bin/etcd", installedRevision, withEtcd)
}

// forwardLocal serves a host loopback port whose connections an SSH connection of its own to
// node carries to addr as the guest sees it (a command timing out on the shared one closes that
// one); it is closed when the test ends.
func (l *lab) forwardLocal(node, addr string) string {
	l.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l.t.Fatal(err)
	}
	conn := &sshConn{addr: l.vms[node].sshAddr}
	l.t.Cleanup(func() { ln.Close(); conn.close() })
	go serve(ln, func() (net.Conn, error) { return conn.dial(addr) })
	return ln.Addr().String()
}

// forwardRemote serves addr on node's loopback, each connection carried to the host's to, over
// an SSH connection of its own (a command timing out on the shared one closes that one); when the
// connection drops it connects and listens again, until the test ends.
func (l *lab) forwardRemote(node, addr, to string) {
	conn := &sshConn{addr: l.vms[node].sshAddr}
	done := make(chan struct{})
	ended := make(chan struct{})
	dial := func() (net.Conn, error) { return net.DialTimeout("tcp", to, 10*time.Second) }
	go func() {
		defer close(ended)
		// At most every 2 s, for longer than a boot test may run.
		for range 5000 {
			select {
			case <-done:
				return
			default:
			}
			if c, err := conn.client(); err == nil {
				if ln, err := c.Listen("tcp", addr); err == nil {
					served := make(chan struct{})
					go func() {
						select {
						case <-done:
							ln.Close()
						case <-served:
						}
					}()
					serve(ln, dial)
					close(served)
				}
			}
			conn.close()
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
			}
		}
	}()
	l.t.Cleanup(func() { close(done); <-ended; conn.close() })
}

// serve copies each connection ln accepts to one dial makes, both ways, until ln is closed.
func serve(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			out, err := dial()
			if err != nil {
				return
			}
			defer out.Close()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(out, in); closeWrite(out) }()
			go func() { defer wg.Done(); _, _ = io.Copy(in, out); closeWrite(in) }()
			wg.Wait()
		}()
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		c.Close()
	}
}

// startAPI is the cluster's API as the test's stand-in for the control plane: Kubernetes' own
// kube-apiserver on the host, over the guests' etcd (each reached through its SSH connection,
// with the client certificate the operator's CA signed), served to each guest on its own
// loopback at guestAPI.
func (l *lab) startAPI() *kubeapi.Server {
	l.t.Helper()
	dir := filepath.Join(l.dir, "kube-apiserver")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		l.t.Fatal(err)
	}
	files := map[string][]byte{"etcd-ca.crt": image.etcdClient.CA, "etcd-client.crt": image.etcdClient.Cert, "etcd-client.key": image.etcdClient.Key}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			l.t.Fatal(err)
		}
	}
	etcd := kubeapi.Etcd{CAFile: filepath.Join(dir, "etcd-ca.crt"), CertFile: filepath.Join(dir, "etcd-client.crt"), KeyFile: filepath.Join(dir, "etcd-client.key")}
	for _, n := range nodeNames {
		etcd.Servers = append(etcd.Servers, "https://"+l.forwardLocal(n, "127.0.0.1:"+etcdPort))
	}
	api := kubeapi.Start(l.t, filepath.Join(image.bin, "kube-apiserver"), dir, etcd)
	for _, n := range nodeNames {
		l.forwardRemote(n, guestAPI, strings.TrimPrefix(api.URL, "https://"))
	}
	return api
}

// registerOperator makes the API what the cluster-etcd-operator makes it (kubeapi), and does
// what install.md's handover step 1 has an administrator do with oc: the ServiceAccount
// tnf-handover in openshift-etcd-operator bound to the handover's ClusterRole, and a token of it
// (oc create token: a TokenRequest). It returns the Etcd resource and the token.
func registerOperator(t testing.TB, api *kubeapi.Server) (dynamic.ResourceInterface, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := api.Client("admin")
	const ns = handover.ServiceAccountNamespace
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: handover.ServiceAccountName}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etcds, err := kubeapi.RegisterEtcdOperator(ctx, api.Config("admin"), rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: handover.ServiceAccountName})
	if err != nil {
		t.Fatal(err)
	}
	day := int64(24 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, handover.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &day}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return etcds, tr.Status.Token
}

// deliverHandoverCredential does the rest of install.md's handover step 1 on each node, with
// its commands: the handover's token piped over SSH to tnfctl install-credential handover, which
// takes the API's address and CA from the kubelet's kubeconfig (here a stand-in of the one MCO
// writes), then the unit started (at boot it found no credential).
func (l *lab) deliverHandoverCredential(api *kubeapi.Server, token string) {
	l.t.Helper()
	kubelet, err := kubeapi.Kubeconfig("https://"+guestAPI, "", api.CA(), "kubelet-bootstrap-stand-in")
	if err != nil {
		l.t.Fatal(err)
	}
	install := strings.Join(doccheck.InstallCredential(l.t, "handover"), " ")
	for _, n := range nodeNames {
		l.run(n, fmt.Sprintf("echo %s | base64 -d | install -D -m 0600 /dev/stdin %s",
			base64.StdEncoding.EncodeToString(kubelet), nodetoken.KubeletKubeconfig))
		if out, err := l.vms[n].sshClient.runInput(install, strings.NewReader(token+"\n")); err != nil {
			l.t.Fatalf("%s: %s: %v", n, install, err)
		} else {
			l.t.Logf("%s: %s", n, strings.TrimSpace(out))
		}
		l.run(n, "systemctl start tnf-handover.service")
	}
}

// handoverState is node's /var/lib/tnf/handover.json.
func (l *lab) handoverState(node string) (handover.State, error) {
	out, err := l.vms[node].sshClient.run("cat " + handover.StateFile)
	if err != nil {
		return handover.State{}, err
	}
	var st handover.State
	return st, json.Unmarshal([]byte(out), &st)
}

// waitHandover waits until node's handover reached done (its last step, setting the completion
// once both serve, may still wait).
func (l *lab) waitHandover(node string, done func(handover.State) bool) {
	l.t.Helper()
	poll.Until(l.t, node+"'s handover", settleLimit, 3*time.Second, func() (bool, string) {
		st, err := l.handoverState(node)
		return err == nil && done(st), fmt.Sprint(st, err)
	})
}

// rollOutWithoutEtcd is the stand-in for the operator's rollout of the revision without the etcd
// container on node: its installer replaces the static pod manifest as library-go's installer pod
// does, removed and then written.
func (l *lab) rollOutWithoutEtcd(node string) {
	l.t.Helper()
	pod, err := json.Marshal(installerPod(node, image.nodeIPs, false))
	if err != nil {
		l.t.Fatal(err)
	}
	l.run(node, fmt.Sprintf("rm %[2]s && echo %[1]s | base64 -d > %[2]s", base64.StdEncoding.EncodeToString(pod), etcdnode.DefaultStaticPodManifest))
	l.t.Logf("%s: the operator's stand-in rolled out the static pod without etcd", node)
}

// etcdIdentity is the cluster ID and the members' IDs by name, through node's member.
func (l *lab) etcdIdentity(node string) (uint64, map[string]uint64) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, members, err := etcdcheck.Identity(ctx, l.etcdClient(node))
	if err != nil {
		l.t.Fatal(err)
	}
	return id, members
}

// waitCondition waits until the Etcd object's condition is True.
func (l *lab) waitCondition(etcds dynamic.ResourceInterface, condition string) {
	l.t.Helper()
	poll.Until(l.t, "tnf-handover.service set "+condition, settleLimit, 3*time.Second, func() (bool, string) {
		return kubeapi.ConditionTrue(etcds, condition), ""
	})
}

// TestInstallerHandover is the install on real systemd, with the podman runtime: the nodes boot a
// disk where etcd runs as the installer left it (the operator's static pod, run by a stand-in
// kubelet), node1 first as MCO's rollout reboots it, and its kubelet runs the installer's etcd
// before any setup; then node2, and the layer's setup forms the cluster while the etcd agents
// wait behind the installer's members. Kubernetes' kube-apiserver on the host serves over
// the guests' etcd. The administrator delivers the handover's credential; tnf-handover.service
// tells the operator, whose stand-in rolls the static pod out without etcd, node1 then node2;
// each agent starts the same member in its container, on the same data. A writer through etcd
// runs throughout: every acknowledged write is on both members, the cluster and member IDs are
// the installer's, and no learner joined, no cluster was forced, nothing was moved aside.
func TestInstallerHandover(t *testing.T) {
	l := newLab(t, image.installedDisk(t))
	l.etcdTLS = image.podmanTLS
	// MCO's rollout: node1 reboots into the layer first, while node2 still runs the installer's
	// etcd (here: is off). Before the first setup, node1's boot starts kubelet, which runs the
	// installer's member again, and status says so.
	t0 := l.powerOn("node1")
	poll.Until(t, "node1's kubelet runs the installer's etcd, alone", bootLimit, 3*time.Second, func() (bool, string) {
		out, err := l.vms["node1"].sshClient.run("systemctl is-active crio.service kubelet.service && test -e " + staticpod.KubeletMarker +
			" && ss -Hltn 'sport = :2380'")
		return err == nil && strings.Contains(out, ":2380"), fmt.Sprint(out, err)
	})
	poll.Until(t, "tnfctl status on node1 says so", bootLimit, 3*time.Second, func() (bool, string) {
		out, _ := l.vms["node1"].sshClient.run("tnfctl status")
		return strings.HasPrefix(out, "INSTALLER'S ETCD: waits for node2 to join"), out
	})
	l.powerOn("node2")
	// Setup done on both, Pacemaker runs kubelet (it found it running), the agents wait behind
	// the installer's etcd.
	l.waitRoles("node1", map[string]string{"node1": "Unpromoted", "node2": "Unpromoted"})
	l.voters("node1", 2)
	for _, n := range nodeNames {
		l.run(n, "test -f /var/lib/tnf/setup.done")
	}
	clusterID, members := l.etcdIdentity("node1")
	w := l.startWriter()
	l.waitWrites(w, "the installer's etcd")
	l.logTimeline("installed cluster's cold boot", t0, l.journal("node1", t0), l.journal("node2", t0), firstWrite(w, t0))

	api := l.startAPI()
	etcds, token := registerOperator(t, api)
	l.deliverHandoverCredential(api, token)
	l.waitCondition(etcds, handover.ConditionReady)
	for _, n := range nodeNames {
		l.waitHandover(n, func(st handover.State) bool {
			return st.Step == handover.StepInstaller && strings.Contains(st.Waiting, "operator has not rolled out")
		})
		// Its exit code is 4 (recovering): the text is what counts.
		if out, _ := l.vms[n].sshClient.run("tnfctl status"); !strings.Contains(out, "Handover:  waiting for "+handover.StepInstaller) {
			t.Errorf("tnfctl status on %s does not say where the handover waits:\n%s", n, out)
		}
	}
	for _, n := range nodeNames {
		began := time.Now()
		l.rollOutWithoutEtcd(n)
		l.waitHandover(n, func(st handover.State) bool { return st.Step == handover.StepDone })
		l.waitWrites(w, n+" handed over")
		t.Logf("%s handed over: longest etcd write gap %v", n, w.LongestGap(began, time.Now()).Round(time.Millisecond))
	}
	l.waitCondition(etcds, handover.ConditionCompleted)
	for _, n := range nodeNames {
		l.waitHandover(n, handover.State.Done)
	}
	l.waitRoles("node1", map[string]string{"node1": "Promoted", "node2": "Promoted"})
	l.checkAcked(w.Stop(), nodeNames...)
	l.etcdInPodman(nodeNames...)
	for _, n := range nodeNames {
		l.run(n, "test ! -e "+staticpod.KubeletMarker)
	}
	afterID, afterMembers := l.etcdIdentity("node2")
	if afterID != clusterID || fmt.Sprint(afterMembers) != fmt.Sprint(members) {
		t.Errorf("etcd after the handover: cluster %x, members %x; the installer's: cluster %x, members %x", afterID, afterMembers, clusterID, members)
	}
	for _, n := range nodeNames {
		// The agent's decisions are in Pacemaker's log (its actions' output), its other lines in
		// its own; data moved aside is named *.moved-* beside or inside the data dir.
		out := l.run(n, "cat /var/log/pacemaker/pacemaker.log /var/log/tnf-etcd.log | grep -e decision=join-as-learner -e decision=force-new-cluster "+
			"-e decision=new-cluster -e decision=restore-new-cluster; find /var/lib -maxdepth 2 -name '*.moved-*'; true")
		if strings.TrimSpace(out) != "" {
			t.Errorf("%s: the agent joined, forced or made a cluster, or moved data aside:\n%s", n, out)
		}
	}
	l.logTimeline("handover", t0, l.journal("node1", t0), l.journal("node2", t0))
}
