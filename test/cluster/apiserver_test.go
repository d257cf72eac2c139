//go:build integration

package cluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	basepoll "github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/outofservice"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/etcdcheck"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/logline"
	"github.com/tnf-layer/tnf-layer/test/testca"
)

// The API scenarios run the real kube-apiserver (Kubernetes 1.32, the release OpenShift 4.19
// ships; make builds it from tools/kube-apiserver) on both nodes in OpenShift's shape: its
// --etcd-servers list the local member first, then the peer, over TLS with a client
// certificate; etcd requires client certificates. It is the node's API server for as long as
// the node has power, restarted when it exits as the kubelet restarts its static pod.
const (
	apiPort = "6443"
	// pkiDir holds each node's certificates, keys and API tokens, on the node's disk.
	pkiDir = "/etc/tnf-test-pki"
	// apiNamespace is where the API writer creates its objects: kube-apiserver makes it itself.
	apiNamespace = "default"
)

// apiAccess is how the test reaches the API servers: a token of system:masters and the CA.
type apiAccess struct {
	token string
	ca    []byte
}

// newAPICluster is newCluster with etcd over TLS and kube-apiserver on both nodes.
func newAPICluster(t testing.TB, change func(*clusterconfig.Config)) *cluster {
	ca, err := testca.New("tnf-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, func(cfg *clusterconfig.Config) {
		cfg.OutOfService.KubeconfigFile = pkiDir + "/out-of-service.kubeconfig"
		delete(cfg.Resources.Etcd, "insecure_plaintext")
		cfg.Resources.Etcd["cert_file"] = pkiDir + "/etcd-serving.crt"
		cfg.Resources.Etcd["key_file"] = pkiDir + "/etcd-serving.key"
		cfg.Resources.Etcd["trusted_ca_file"] = pkiDir + "/ca.crt"
		if change != nil {
			change(cfg)
		}
	})
	c.serveAPI(ca)
	return c
}

// serveAPI gives each node a kube-apiserver whose etcd client certificate, and the test's etcd
// clients', ca issues, with its serving certificate, tokens and kubeconfigs.
func (c *cluster) serveAPI(ca testca.CA) {
	c.t.Helper()
	token, outOfServiceToken, handoverToken := randomText(16), randomText(16), randomText(16)
	// kube-apiserver's etcd client certificate names no address: etcd compares a client
	// certificate's addresses, when it has any, with the address the client connects from.
	clientCert, clientKey := c.issue(ca, "kube-apiserver-etcd-client")
	saKey, err := kubeapi.ServiceAccountKey()
	if err != nil {
		c.t.Fatal(err)
	}
	for _, name := range c.nodes {
		n := c.layout.Nodes[name]
		ip := net.ParseIP(c.ip[name])
		etcdCert, etcdKey := c.issue(ca, name, ip)
		apiCert, apiKey := c.issue(ca, name, ip, net.IPv4(127, 0, 0, 1))
		for file, data := range map[string][]byte{
			"ca.crt":           ca.PEM(),
			"etcd-serving.crt": etcdCert, "etcd-serving.key": etcdKey,
			"etcd-client.crt": clientCert, "etcd-client.key": clientKey,
			"apiserver.crt": apiCert, "apiserver.key": apiKey,
			"service-account.key": saKey,
			"tokens.csv": []byte(token + ",tnf-test,tnf-test,system:masters\n" + outOfServiceToken + "," + outOfServiceUser + "," + outOfServiceUser + "\n" +
				handoverToken + "," + handoverUser + "," + handoverUser + "\n"),
			"out-of-service.kubeconfig": kubeconfig(c.t, "https://"+net.JoinHostPort(c.ip[name], apiPort), pkiDir+"/ca.crt", outOfServiceToken),
			"handover.kubeconfig":       kubeconfig(c.t, "https://"+net.JoinHostPort(c.ip[name], apiPort), pkiDir+"/ca.crt", handoverToken),
		} {
			c.write(filepath.Join(n.Dir, "disk", "etc", strings.TrimPrefix(pkiDir, "/etc/"), file), data, 0o600)
		}
		n.APIServer = apiServerCommand(testbin.Path(c.t, "kube-apiserver"), c.ip[name], c.ip[c.other(name)])
		c.layout.Nodes[name] = n
	}
	c.writeLayout()
	c.useEtcdTLS(ca, clientCert, clientKey)
	c.api = &apiAccess{token: token, ca: ca.PEM()}
}

// useEtcdTLS makes the test's etcd clients trust ca and present cert.
func (c *cluster) useEtcdTLS(ca testca.CA, cert, key []byte) {
	c.t.Helper()
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		c.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM())
	c.etcdTLS = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
}

// outOfServiceUser is the identity of tnf-out-of-service.service's credential: a token bound
// to nothing but the layer's ClusterRole (registerNodes binds it), so a pass that needed more
// would fail here.
const outOfServiceUser = "tnf-out-of-service"

// kubeconfig is kubeapi.Kubeconfig of a CA file, failing the test on an error.
func kubeconfig(t testing.TB, server, caFile, token string) []byte {
	data, err := kubeapi.Kubeconfig(server, caFile, nil, token)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (c *cluster) issue(ca testca.CA, cn string, ips ...net.IP) (cert, key []byte) {
	cert, key, err := ca.Issue(cn, ips...)
	if err != nil {
		c.t.Fatal(err)
	}
	return cert, key
}

// apiServerCommand is a node's kube-apiserver. The shell restarts it when it exits (it does
// when etcd does not answer at its start), as the kubelet restarts a static pod; a bound on the
// restarts keeps the loop finite.
func apiServerCommand(binary, self, peer string) []string {
	etcd := kubeapi.Etcd{Servers: []string{"https://" + net.JoinHostPort(self, etcdPort), "https://" + net.JoinHostPort(peer, etcdPort)},
		CAFile: pkiDir + "/ca.crt", CertFile: pkiDir + "/etcd-client.crt", KeyFile: pkiDir + "/etcd-client.key"}
	return append([]string{"sh", "-c", `for i in $(seq 1000); do "$@"; sleep 1; done`, "kube-apiserver", binary},
		kubeapi.Args(self, apiPort, pkiDir, "/run/kube-apiserver", etcd)...)
}

// restConfig reaches node's API server from inside the node's network namespace, as the test's
// administrator (system:masters).
func (c *cluster) restConfig(node string) *rest.Config {
	netns := c.layout.Nodes[node].NetNS
	return &rest.Config{Host: "https://" + net.JoinHostPort(c.ip[node], apiPort), BearerToken: c.api.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.api.ca},
		// The writer's pace is the test's, not client-go's default limit of 5 a second.
		QPS: 100, Burst: 100,
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) { return c.dial(netns, addr) }}
}

// apiClient is a clientset of restConfig.
func (c *cluster) apiClient(node string) *kubernetes.Clientset {
	c.t.Helper()
	cs, err := kubernetes.NewForConfig(c.restConfig(node))
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// recoveryKubeconfig is where a test puts an administrator's credential on a node, as the
// control plane's localhost-recovery kubeconfig is on a real one.
const recoveryKubeconfig = pkiDir + "/recovery.kubeconfig"

// adminKubeconfig writes an administrator's credential for node's own API server to path (under
// /etc) on node's disk, which a reboot keeps, and returns path.
func (c *cluster) adminKubeconfig(node, path string) string {
	c.t.Helper()
	c.write(filepath.Join(c.layout.Nodes[node].Dir, "disk", "etc", strings.TrimPrefix(path, "/etc/")),
		kubeconfig(c.t, "https://"+net.JoinHostPort(c.ip[node], apiPort), pkiDir+"/ca.crt", c.api.token), 0o600)
	return path
}

// upWithAPI boots both nodes, waits until etcd is promoted and kube-apiserver ready on both,
// and registers the nodes.
func (c *cluster) upWithAPI() {
	c.t.Helper()
	c.up()
	for _, n := range c.nodes {
		c.waitAPIReady(n)
	}
	c.registerNodes()
}

// registerNodes creates both nodes' Node objects, Ready, and binds the layer's ClusterRole to
// tnf-out-of-service.service's identity, as an administrator applies the manifest build-layer
// writes and binds it.
func (c *cluster) registerNodes() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := c.apiClient(c.nodes[0])
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, outofservice.ClusterRole(outofservice.ClusterRoleName, c.nodes...), metav1.CreateOptions{})
	if err == nil {
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: outofservice.ClusterRoleName},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: outofservice.ClusterRoleName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: outOfServiceUser}}}, metav1.CreateOptions{})
	}
	if err != nil {
		c.t.Fatal(err)
	}
	for _, n := range c.nodes {
		if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
		c.setNodeReady(c.nodes[0], n, true)
	}
}

// setNodeReady sets node's Ready condition through through's API: a stand-in for the kubelet
// (none runs here), which reports Ready when it is back, and for the node lifecycle controller,
// which marks a node that stopped reporting Unknown.
func (c *cluster) setNodeReady(through, node string, ready bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes := c.apiClient(through).CoreV1().Nodes()
	status := corev1.ConditionUnknown
	if ready {
		status = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()}}
		_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		c.t.Fatal(err)
	}
}

// waitTaint waits until node's Node, read through through's API, carries the out-of-service
// taint with the layer's annotation (tainted) or neither, and returns when it saw it.
func (c *cluster) waitTaint(through, node string, tainted bool) time.Time {
	c.t.Helper()
	nodes := c.apiClient(through).CoreV1().Nodes()
	var seen time.Time
	c.waitFor(fmt.Sprintf("%s's Node tainted out-of-service: %v", node, tainted), settle, func() (bool, string) {
		got, err := c.nodeTainted(nodes, node)
		seen = time.Now()
		return err == nil && got == tainted, fmt.Sprintf("tainted %v, %v", got, err)
	})
	return seen
}

// taintAdded is when node's tnf-out-of-service.service first decided, at since or later, to add
// the taint (its log: one line per change of decision); zero, which is before any time, when it
// did not.
func (c *cluster) taintAdded(node string, since time.Time) time.Time {
	c.t.Helper()
	for _, line := range strings.Split(readFile(c.layout.Nodes[node].path("log", "out-of-service.out")), "\n") {
		if logline.Field(line, "action") != "add" {
			continue
		}
		at, ok := logline.AgentTime(line)
		if !ok {
			c.t.Fatalf("%s's out-of-service log: %q has no time", node, line)
		}
		if !at.Before(since) {
			return at
		}
	}
	return time.Time{}
}

// nodeTainted says whether node carries the out-of-service taint; it fails the test when the
// taint and the layer's annotation are not both there or both gone.
func (c *cluster) nodeTainted(nodes typedcorev1.NodeInterface, node string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := nodes.Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&outofservice.Taint) })
	if _, annotated := n.Annotations[outofservice.Annotation]; annotated != tainted {
		c.t.Fatalf("%s: out-of-service taint %v, the layer's annotation %v: %v %v", node, tainted, annotated, n.Spec.Taints, n.Annotations)
	}
	return tainted, nil
}

// upWithAPIAndWriting is upWithAPI, then a writer through etcd that etcd acknowledges.
func (c *cluster) upWithAPIAndWriting() *writer {
	c.t.Helper()
	c.upWithAPI()
	return c.writing()
}

// waitAPIReady waits until node's API server answers /readyz with ok.
func (c *cluster) waitAPIReady(node string) {
	c.t.Helper()
	cs := c.apiClient(node)
	c.waitFor(node+"'s kube-apiserver ready", settle, func() (bool, string) {
		err := kubeapi.Ready(cs)
		return err == nil, fmt.Sprint(err)
	})
}

// apiWriter creates a ConfigMap through one API server every 100 ms, as a controller writes,
// and records each creation the API acknowledged, and the newest resourceVersion among them.
// Its objects are named after the writer.
type apiWriter struct {
	*writer
	name, node string // node: the API server it writes through
	newestRV   atomic.Uint64
}

func (c *cluster) startAPIWriter(name, node string) *apiWriter {
	cms := c.apiClient(node).CoreV1().ConfigMaps(apiNamespace)
	w := &apiWriter{name: name, node: node}
	w.writer = &writer{etcdcheck.Start(func(ctx context.Context, key string) error {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.object(key)}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// The writes come one after the other: only the reader reads this concurrently.
		rv, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		if err == nil && rv > w.newestRV.Load() {
			w.newestRV.Store(rv)
		}
		return err
	}, 100*time.Millisecond, 2*time.Second)}
	return w
}

// apiReader lists the writer's namespace through one API server every 200 ms, as a client that
// reads what it wrote. A list without a resourceVersion is a consistent read, so its
// resourceVersion is at least the newest the API had acknowledged to the writer when the list
// was sent; one below it is a stale read. Lists that fail (the API without etcd) are not counted.
type apiReader struct {
	node string
	stop func()

	mu    sync.Mutex
	reads int
	stale []string
}

func (c *cluster) readAPI(node string, w *apiWriter) *apiReader {
	cms := c.apiClient(node).CoreV1().ConfigMaps(apiNamespace)
	r := &apiReader{node: node}
	r.stop = c.every(200*time.Millisecond, func() {
		acked := w.newestRV.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		list, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
		cancel()
		if err != nil {
			return
		}
		rv, err := strconv.ParseUint(list.ResourceVersion, 10, 64)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reads++
		if err != nil || rv < acked {
			r.stale = append(r.stale, fmt.Sprintf("a list at resourceVersion %q after %d was acknowledged", list.ResourceVersion, acked))
		}
	})
	return r
}

// every calls f at once, then every interval, in a goroutine of its own, until the stop it
// returns is called (or the test ends): stop waits for f's last call; a second call does nothing.
func (c *cluster) every(interval time.Duration, f func()) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = basepoll.Every(ctx, interval, func(context.Context) (bool, error) {
			f()
			return false, nil
		})
	}()
	stop = func() {
		cancel()
		<-done
	}
	c.t.Cleanup(stop)
	return stop
}

// Stop ends the reads (a second call does nothing) and returns how many were taken and the
// stale ones.
func (r *apiReader) Stop() (int, []string) {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, append([]string(nil), r.stale...)
}

// object is the ConfigMap the writer creates for one of its keys.
func (w *apiWriter) object(key string) string {
	return w.name + "-" + strings.TrimPrefix(key, etcdcheck.Prefix)
}

// apiWatcher is a client-go informer on the writer's ConfigMaps through one API server, as the
// cluster's controllers watch: it counts its lists (a relist is every list after the first) and
// checks that the objects its watch delivers come with resourceVersions that only grow.
type apiWatcher struct {
	node string
	stop chan struct{}

	mu        sync.Mutex
	lists     int
	listRV    uint64          // the resourceVersion of the last list
	watchRV   uint64          // the newest resourceVersion the watch delivered
	seen      map[string]bool // objects delivered, by name
	backwards []string        // lists and watch events that did not come after the newest before them
	store     cache.Store     // the objects the informer holds now
}

func (c *cluster) watchAPI(node string) *apiWatcher {
	c.t.Helper()
	w := &apiWatcher{node: node, stop: make(chan struct{}), seen: map[string]bool{}}
	from := cache.NewListWatchFromClient(c.apiClient(node).CoreV1().RESTClient(), "configmaps", apiNamespace, fields.Everything())
	counted := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := from.ListWithContext(ctx, o)
			if err == nil {
				rv, _ := strconv.ParseUint(obj.(*corev1.ConfigMapList).ResourceVersion, 10, 64)
				w.mu.Lock()
				// A list after the first is never older than what came before it.
				if newest := max(w.listRV, w.watchRV); rv < newest {
					w.backwards = append(w.backwards, fmt.Sprintf("a list at %d after %d", rv, newest))
				}
				w.lists, w.listRV = w.lists+1, rv
				w.mu.Unlock()
			}
			return obj, err
		},
		WatchFuncWithContext: from.WatchWithContext,
	}
	informer := cache.NewSharedIndexInformer(counted, &corev1.ConfigMap{}, 0, cache.Indexers{})
	w.store = informer.GetStore()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: w.add})
	if err != nil {
		c.t.Fatal(err)
	}
	go informer.Run(w.stop)
	c.t.Cleanup(w.Stop)
	return w
}

// watchAPIs starts an informer through each node's API server.
func (c *cluster) watchAPIs() map[string]*apiWatcher {
	c.t.Helper()
	watchers := map[string]*apiWatcher{}
	for _, n := range c.nodes {
		watchers[n] = c.watchAPI(n)
	}
	return watchers
}

// apiClients are a scenario's clients of the API: a writer through one API server, a reader of
// its writes through the same, and an informer through each.
type apiClients struct {
	*apiWriter
	reader   *apiReader
	watchers map[string]*apiWatcher
}

// startAPIClients starts an informer through each API server, then a writer named name and its
// reader through node's, and waits until the API acknowledges its writes.
func (c *cluster) startAPIClients(name, node string) *apiClients {
	c.t.Helper()
	a := &apiClients{watchers: c.watchAPIs(), apiWriter: c.startAPIWriter(name, node)}
	a.reader = c.readAPI(node, a.apiWriter)
	c.waitWrites(a.writer, "both up, through "+node+"'s API")
	return a
}

// stopAPIClients stops the writer and the reader, fails the test on a stale read, waits until
// each informer delivered every object the API acknowledged, in order, stops the informers and
// returns their relists by node (logged).
func (c *cluster) stopAPIClients(a *apiClients) map[string]int {
	c.t.Helper()
	acked := a.Stop()
	reads, stale := a.reader.Stop()
	c.t.Logf("%s's API: %d reads of the writer's own writes, %d stale", a.reader.node, reads, len(stale))
	if len(stale) > 0 {
		c.defect(&c.defects.stale, len(stale), fmt.Sprintf("%s's API served stale reads: %v", a.reader.node, stale))
	}
	relists := map[string]int{}
	for _, n := range c.nodes {
		c.waitDelivered(a.watchers[n], a.apiWriter, acked)
		a.watchers[n].Stop()
		relists[n] = a.watchers[n].relists()
		c.t.Logf("%s's informer: %d relists", n, relists[n])
	}
	return relists
}

func (w *apiWatcher) add(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[cm.Name] = true
	// A list delivers its objects in name order, all at or below its own resourceVersion;
	// what comes after it through the watch must be newer than everything before.
	if rv <= w.listRV {
		return
	}
	if rv <= w.watchRV {
		w.backwards = append(w.backwards, fmt.Sprintf("%s at %d after %d", cm.Name, rv, w.watchRV))
	}
	w.watchRV = max(w.watchRV, rv)
}

// Stop ends the informer; a second call does nothing.
func (w *apiWatcher) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

// relists is how many times the informer listed again after its first list.
func (w *apiWatcher) relists() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(w.lists-1, 0)
}

// waitDelivered waits a minute at most until the informer delivered every object the writer had
// acknowledged (acked, its keys), in order: an object it did not deliver, one that a read through
// the writer's API server no longer finds, and one out of order are defects.
func (c *cluster) waitDelivered(w *apiWatcher, writer *apiWriter, acked []string) {
	c.t.Helper()
	missing := func() []string {
		w.mu.Lock()
		defer w.mu.Unlock()
		var names []string
		for _, key := range acked {
			if name := writer.object(key); !w.seen[name] {
				names = append(names, name)
			}
		}
		return names
	}
	what := fmt.Sprintf("%s's informer delivered %d acknowledged objects", w.node, len(acked))
	began := time.Now()
	for i := 0; i < 60 && len(missing()) > 0; i++ {
		time.Sleep(time.Second)
	}
	if names := missing(); len(names) > 0 {
		c.defect(&c.defects.undelivered, len(names), fmt.Sprintf("%s: not within %v, %d missing: %v", what, time.Minute, len(names), names))
		if lost := c.absent(writer.node, names); len(lost) > 0 {
			c.defect(&c.defects.lost, len(lost), fmt.Sprintf("acknowledged by %s's API, then not found through it: %v", writer.node, lost))
		}
	} else {
		c.t.Logf("%s after %v", what, time.Since(began).Round(time.Second))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.backwards) > 0 {
		c.defect(&c.defects.outOfOrder, len(w.backwards), fmt.Sprintf("%s's informer: lists or watch events out of order: %v", w.node, w.backwards))
	}
}

// absent are the objects among names that a read through node's API server (from etcd, by
// quorum) does not find.
func (c *cluster) absent(node string, names []string) []string {
	c.t.Helper()
	cms := c.apiClient(node).CoreV1().ConfigMaps(apiNamespace)
	var absent []string
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cms.Get(ctx, name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			absent = append(absent, name)
		case err != nil:
			c.t.Fatalf("reading %s through %s's API: %v", name, node, err)
		}
	}
	return absent
}

// apiDefects are what the API's clients saw go wrong: stale reads, objects the API acknowledged
// that an informer had not delivered a minute later, of those the ones no longer found, events
// out of order.
type apiDefects struct{ stale, undelivered, lost, outOfOrder int }

// defect fails the test on the layer's clusters. On the field's stack it counts n more under
// count and logs msg: its benchmark reports them, so that its rows say where it lost data.
func (c *cluster) defect(count *int, n int, msg string) {
	c.t.Helper()
	if !c.field() {
		c.t.Errorf("%s", msg)
		return
	}
	*count += n
	c.t.Logf("a defect of the field's stack: %s", msg)
}

// reportDefects reports the field's defects (apiDefects); the layer's fail their tests instead.
func (c *cluster) reportDefects(b *testing.B) {
	if !c.field() {
		return
	}
	b.ReportMetric(float64(c.defects.stale), "stale-reads")
	b.ReportMetric(float64(c.defects.undelivered), "undelivered")
	b.ReportMetric(float64(c.defects.lost), "lost")
	b.ReportMetric(float64(c.defects.outOfOrder), "out-of-order")
}

// readyzLog polls a node's /readyz every 200 ms and keeps each answer's time and outcome.
type readyzLog struct {
	stop  func()
	mu    sync.Mutex
	polls []readyzPoll
}

type readyzPoll struct {
	at time.Time
	ok bool
}

func (c *cluster) logReadyz(node string) *readyzLog {
	cs := c.apiClient(node)
	r := &readyzLog{}
	r.stop = c.every(200*time.Millisecond, func() {
		ok := kubeapi.Ready(cs) == nil
		r.mu.Lock()
		r.polls = append(r.polls, readyzPoll{time.Now(), ok})
		r.mu.Unlock()
	})
	return r
}

// Stop ends the polling; a second call does nothing.
func (r *readyzLog) Stop() { r.stop() }

// Failures is how many polls failed so far.
func (r *readyzLog) Failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.polls {
		if !p.ok {
			n++
		}
	}
	return n
}

// ReadyAfter is how long after t /readyz answered ok again for good: the first ok poll after
// the last failed one since t (t itself when none failed); false when it has not yet.
func (r *readyzLog) ReadyAfter(t time.Time) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	back, ok := t, true
	for _, p := range r.polls {
		switch {
		case !p.at.After(t):
		case !p.ok:
			ok = false
		case !ok:
			back, ok = p.at, true
		}
	}
	return back.Sub(t), ok
}

// logWritesBack logs when etcd's and the API's acknowledged writes came back after fault (the
// end of the longest wait for one), and the longest gap between the API's until then.
func (c *cluster) logWritesBack(fault string, at time.Time, etcdWrites *writer, api *apiClients) {
	c.t.Helper()
	etcdBack, _ := etcdWrites.BackAfter(at)
	apiBack, _ := api.BackAfter(at)
	c.t.Logf("%s → etcd's writes back %.1f s, the API's %.1f s, longest API gap %.1f s", fault,
		etcdBack.Sub(at).Seconds(), apiBack.Sub(at).Seconds(), api.LongestGap(at, apiBack).Seconds())
}

// TestAPINodeFailure is node 2's power cut as the API's clients see it: a writer creates objects
// through node 1's API server, informers watch them through both; node 1 fences node 2 and
// serves alone; node 2 comes back. Every object the API acknowledged reaches both informers,
// each watch delivers them in order, and the figures are logged beside etcd's own.
func TestAPINodeFailure(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	etcdWrites := c.upWithAPIAndWriting()
	apiWrites := c.startAPIClients("cut", "node1")
	ready := c.logReadyz("node1")

	fault := time.Now()
	c.power("off", "node2")
	c.waitFenced("node1", "node2", 1)
	c.waitWrites(etcdWrites, "node1 alone")
	c.waitWrites(apiWrites.writer, "node1 alone, through the API")
	c.logWritesBack("node2's power cut", fault, etcdWrites, apiWrites)
	ready.Stop()
	c.t.Logf("node1's /readyz failed %d times (200 ms apart)", ready.Failures())

	taintedAt := c.waitTaint("node1", "node2", true)
	c.t.Logf("node2's Node tainted out-of-service %.1f s after its power cut", taintedAt.Sub(fault).Seconds())

	c.setNodeReady("node1", "node2", false)
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)
	c.waitAPIReady("node2")
	c.waitWrites(apiWrites.writer, "both back, through the API")
	c.stopAPIClients(apiWrites)
	c.stopAndCheck(etcdWrites)
	c.assertFenced("node1", map[string]int{"node2": 1, "node1": 0})
	readyAt := time.Now()
	c.setNodeReady("node1", "node2", true)
	c.t.Logf("node2 Ready: its taint off after %.1f s", c.waitTaint("node1", "node2", false).Sub(readyAt).Seconds())

	// Once more with every BMC unreachable: the fencing fails and no taint follows it (nor can:
	// node1 serves no etcd, so no API, until node2 is proven off). The administrator's
	// confirm-peer-down is Pacemaker's record of a fencing that succeeded, and the
	// administrator's word that node2 is off: the taint follows it.
	c.stopEmulator()
	cutAgain := time.Now()
	c.power("off", "node2")
	// BLOCKED, whether a fencing has failed yet or has not been tried: Pacemaker does not fence
	// while it keeps recovering the fence devices whose BMC does not answer.
	c.waitState("node1", "blocked")
	confirmed := time.Now()
	if out, err := c.tnfctl("node1", "confirm-peer-down", "--yes"); err != nil {
		t.Fatalf("confirm-peer-down --yes: %v\n%s", err, out)
	}
	c.waitTaint("node1", "node2", true)
	if added := c.taintAdded("node1", cutAgain); added.Before(confirmed) {
		t.Fatalf("node1 decided to taint node2 at %v, before the confirmation at %v, while its fencing failed", added, confirmed)
	}
	c.startEmulator()
	c.setNodeReady("node1", "node2", false)
	c.powerBackOn("node2")
	c.waitRoles("node1", bothPromoted)
	c.setNodeReady("node1", "node2", true)
	c.waitTaint("node1", "node2", false)
}

// TestAPIGracefulReboot: each node reboots cleanly while a writer creates objects through the
// other node's API server and informers watch through both. Every acknowledged object reaches
// both informers in order; the longest gap between acknowledged API writes and the relists of
// the informer on the node that stayed up are logged.
func TestAPIGracefulReboot(t *testing.T) {
	t.Parallel()
	c := newAPICluster(t, nil)
	c.upWithAPI()
	for _, node := range c.nodes {
		through := c.other(node)
		apiWrites := c.startAPIClients("reboot-"+node, through)
		began := time.Now()
		c.power("shutdown", node)
		c.waitWrites(apiWrites.writer, node+" away, through the API")
		c.power("on", node)
		c.waitRoles(through, bothPromoted)
		c.waitAPIReady(node)
		c.waitWrites(apiWrites.writer, node+" back, through the API")
		ended := time.Now()
		relists := c.stopAPIClients(apiWrites)
		c.t.Logf("%s rebooted cleanly: longest API write gap %v through %s; %s's informer relisted %d times",
			node, apiWrites.LongestGap(began, ended).Round(time.Millisecond), through, through, relists[through])
	}
	c.assertPlanned()
}
