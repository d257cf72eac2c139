//go:build integration

package cluster_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tnf-layer/tnf-layer/internal/build/manifests"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/apisecrets"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
)

// applySecrets creates what build-layer writes to deliver in's secrets (manifests.NodeSecrets:
// the Secrets, each node's ServiceAccount, its Role and bindings) as an administrator applies
// them, then requests a token for each node's ServiceAccount as `oc create token` does, and
// returns them by node (what goes into the kubeconfig an administrator copies to each node).
func applySecrets(t testing.TB, adminConfig *rest.Config, in clusterconfig.Input) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := kubernetes.NewForConfig(adminConfig)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.NodeSecrets(in)
	if err != nil {
		t.Fatal(err)
	}
	ns := clusterconfig.SecretsNamespace
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for name, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Secret:
			_, err = admin.CoreV1().Secrets(ns).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = admin.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = admin.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *apiextensionsv1.CustomResourceDefinition:
			err = kubeapi.CreateCRDObject(ctx, adminConfig, o)
		default:
			t.Fatalf("%s: a %T the test does not apply", name, obj)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	tokens := map[string]string{}
	for _, n := range in.Config.Nodes {
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, clusterconfig.NodeServiceAccount(n.Name),
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[n.Name] = tr.Status.Token
	}
	return tokens
}

// secretsInput is a node configuration's input as build-layer reads it from tnf.yaml, with
// fixed secrets.
func secretsInput(t testing.TB) clusterconfig.Input {
	cfg := clusterconfig.Config{ClusterName: "tnf-test", CorosyncAuthkeyFile: clusterconfig.AuthkeyFile}
	in := clusterconfig.Input{}
	for i, name := range []string{"node1", "node2"} {
		pw := clusterconfig.SecretsDir + "/" + name + ".password"
		cfg.Nodes = append(cfg.Nodes, clusterconfig.Node{Name: name, IP: "192.0.2." + string(rune('1'+i)), BMC: clusterconfig.BMC{
			Address: "redfish+https://198.51.100." + string(rune('1'+i)) + "/redfish/v1/Systems/1", Username: "admin", PasswordFile: pw}})
		in.Secrets = append(in.Secrets, clusterconfig.Secret{Path: pw, Data: []byte("bmc-password-of-" + name)})
	}
	in.Secrets = append(in.Secrets, clusterconfig.Secret{Path: clusterconfig.AuthkeyFile, Data: []byte(base64.StdEncoding.EncodeToString(authkeyOf(1)) + "\n")})
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	in.Config = cfg
	return in
}

func authkeyOf(b byte) []byte { return []byte(strings.Repeat(string(rune('a'+b)), 256)) }

// TestSecretsFromAPI: a node's secrets come from the Secrets build-layer writes, through the real
// kube-apiserver, with the ServiceAccount token its manifests allow: the files hold the values,
// root-only; the credential reads nothing else; a rotated password replaces the old one; a
// Secret naming another BMC than cluster.yaml and a new Corosync key for a running cluster are
// refused.
func TestSecretsFromAPI(t *testing.T) {
	t.Parallel()
	api := startLoneAPI(t)
	admin := api.Client("admin")
	in := secretsInput(t)
	// node1's credential.
	node, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL, BearerToken: applySecrets(t, api.Config("admin"), in)["node1"], TLSClientConfig: rest.TLSClientConfig{CAFile: api.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := clusterconfig.SecretsNamespace

	// The node's files, in a folder of the test instead of /etc/tnf/secrets.
	dir := t.TempDir()
	local := func(files []apisecrets.File) []apisecrets.File {
		for i := range files {
			files[i].Path = filepath.Join(dir, filepath.Base(files[i].Path))
		}
		return files
	}
	installed := filepath.Join(dir, "installed-authkey") // /etc/corosync/authkey: none yet
	keep := func() []string {
		t.Helper()
		files, err := apisecrets.Fetch(ctx, node, in.Config)
		if err != nil {
			t.Fatal(err)
		}
		changed, err := apisecrets.Keep(local(files), filepath.Join(dir, "corosync-authkey"), installed)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	if changed := keep(); len(changed) != 3 {
		t.Fatalf("first fetch wrote %v, want both passwords and the key", changed)
	}
	for file, want := range map[string]string{"node1.password": "bmc-password-of-node1", "node2.password": "bmc-password-of-node2",
		"corosync-authkey": base64.StdEncoding.EncodeToString(authkeyOf(1)) + "\n"} {
		path := filepath.Join(dir, file)
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", file, got, err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", file, st.Mode(), err)
		}
	}
	if changed := keep(); len(changed) != 0 {
		t.Errorf("a second fetch changed %v", changed)
	}

	// The credential reads the layer's Secrets by name and nothing else.
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"},
		Data: map[string][]byte{"token": []byte("not for the nodes")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := node.CoreV1().Secrets(ns).Get(ctx, "someone-elses", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential got another Secret of %s: %v", ns, err)
	}
	if _, err := node.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential listed the Secrets of %s: %v", ns, err)
	}
	if _, err := node.CoreV1().Secrets("kube-system").Get(ctx, "anything", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential reached kube-system: %v", err)
	}

	// The out-of-service taint: node1's credential patches node2's Node (its peer), and no other
	// Node, its own among them, nor replaces, deletes or lists them.
	for _, name := range []string{"node1", "node2", "worker"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	taint := []byte(`{"spec":{"taints":[{"key":"node.kubernetes.io/out-of-service","value":"nodeshutdown","effect":"NoExecute"}]}}`)
	if _, err := node.CoreV1().Nodes().Patch(ctx, "node2", types.MergePatchType, taint, metav1.PatchOptions{}); err != nil {
		t.Errorf("the node's credential could not taint node2: %v", err)
	}
	for _, other := range []string{"worker", "node1"} {
		if _, err := node.CoreV1().Nodes().Patch(ctx, other, types.MergePatchType, taint, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("node1's credential patched the Node %s: %v", other, err)
		}
	}
	n2, err := admin.CoreV1().Nodes().Get(ctx, "node2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential replaced a whole Node: %v", err)
	}
	if err := node.CoreV1().Nodes().Delete(ctx, "node2", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential deleted a Node: %v", err)
	}
	if _, err := node.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's credential listed the Nodes: %v", err)
	}

	// A rotated BMC password: the file holds the new one only.
	s, err := admin.CoreV1().Secrets(ns).Get(ctx, clusterconfig.FencingSecret("node2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte("rotated-password")
	if s, err = admin.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if changed := keep(); len(changed) != 1 || filepath.Base(changed[0]) != "node2.password" {
		t.Errorf("after the rotation the fetch changed %v, want node2.password", changed)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "node2.password")); string(got) != "rotated-password" {
		t.Errorf("node2.password after the rotation: %q", got)
	}

	// A Secret naming another BMC: refused, nothing written, the message names the Secret's
	// key and cluster.yaml's field.
	s.Data["address"] = []byte("redfish+https://203.0.113.9/redfish/v1/Systems/1")
	if s, err = admin.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = apisecrets.Fetch(ctx, node, in.Config)
	if !errors.Is(err, apisecrets.ErrMismatch) || !strings.Contains(err.Error(), "fencing-credentials-node2 key address") ||
		!strings.Contains(err.Error(), "nodes[1].bmc.address") {
		t.Errorf("a Secret naming another BMC: %v", err)
	}
	if strings.Contains(err.Error(), "rotated-password") {
		t.Errorf("the error carries the password: %v", err)
	}
	s.Data["address"] = []byte(in.Config.Nodes[1].BMC.Address)
	if _, err := admin.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The cluster runs with the first key (Corosync's authkey installed): a new key in the
	// Secret is refused and the kept file stays.
	if err := os.WriteFile(installed, authkeyOf(1), 0o400); err != nil {
		t.Fatal(err)
	}
	k, err := admin.CoreV1().Secrets(ns).Get(ctx, clusterconfig.AuthkeySecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k.Data[clusterconfig.AuthkeySecretKey] = authkeyOf(2)
	if _, err := admin.CoreV1().Secrets(ns).Update(ctx, k, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	files, err := apisecrets.Fetch(ctx, node, in.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apisecrets.Keep(local(files), filepath.Join(dir, "corosync-authkey"), installed); !errors.Is(err, apisecrets.ErrKeyChanged) {
		t.Errorf("a new Corosync key for a running cluster: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "corosync-authkey")); string(got) != base64.StdEncoding.EncodeToString(authkeyOf(1))+"\n" {
		t.Errorf("the kept key changed")
	}
	// A guest compares nothing (no installed key): its Corosync runs with the operator's key.
	if changed, err := apisecrets.Keep(local(files), filepath.Join(dir, "corosync-authkey"), ""); err != nil || !slices.Contains(changed, filepath.Join(dir, "corosync-authkey")) {
		t.Errorf("a guest's sync: changed %v, %v", changed, err)
	}
}

// TestSecretRotation: on the installed cluster, whose nodes fetched their secrets through the
// API, both BMC passwords change at the BMCs and in their Secrets. tnfctl sync-secrets on each
// node replaces the password files and says the change waits for setup (no systemd here to
// start tnf-reconfigure.service, which runs it); setup restarts the fence devices with the new
// passwords; a fencing check with them passes, so does one with the credential node2's fence
// device holds (fence-check --device), a second sync finds nothing to do, and the old
// passwords are gone from the nodes.
func TestSecretRotation(t *testing.T) {
	t.Parallel()
	c := newInstalledCluster(t)
	c.upInstalled()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	secrets := c.apiClient("node1").CoreV1().Secrets(clusterconfig.SecretsNamespace)
	old := map[string]string{}
	for _, n := range c.nodes {
		old[n] = c.password(n)
		pw := bmcPassword()
		c.write(filepath.Join(c.dir, "bmc", n+".password"), []byte(pw+"\n"), 0o600)
		s, err := secrets.Get(ctx, clusterconfig.FencingSecret(n), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Data["password"] = []byte(pw)
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.restartEmulator()
	// The rotation's window at its worst: a device's monitor fails on the old password before the
	// node has the new one, and its recovery's start, with the old password too, fails and bans
	// it from its node. Setup must bring it back.
	if out, err := c.run("node1", "crm_resource", "--fail", "--resource", "fence-node2", "--node", "node1"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c.waitFor("fence-node2 stopped by its failed start on the old password", settle, func() (bool, string) {
		_, st, err := c.status("node1")
		if err != nil {
			return false, err.Error()
		}
		i := slices.IndexFunc(st.Resources, func(r pcmk.ResourceRole) bool { return r.ID == "fence-node2" })
		return i >= 0 && st.Resources[i].Role != "Started", fmt.Sprint(st.Resources)
	})
	for _, n := range c.nodes {
		var out string
		var err error
		if n == "node2" {
			out, err = c.syncWithAdminCredential(n)
		} else {
			out, err = c.tnfctl(n, "sync-secrets")
		}
		if err != nil || strings.Count(out, ".password: written (from Secret") != 2 || !strings.Contains(out, "run tnfctl setup") {
			t.Fatalf("sync-secrets on %s: %v\n%s", n, err, out)
		}
		out, err = c.tnfctl(n, "setup", "--wait", "1m")
		if err != nil || strings.Count(out, "restarted with its new password")+strings.Count(out, "failures cleaned up") < 2 { // both levels fencing the peer run here
			t.Fatalf("setup on %s: %v\n%s", n, err, out)
		}
		if out, err := c.tnfctl(n, "sync-secrets"); err != nil || strings.Contains(out, "written") || strings.Contains(out, "run tnfctl setup") {
			t.Errorf("a second sync-secrets on %s: %v\n%s", n, err, out)
		}
	}
	// Each device's start checks its BMC with the password it read: all four run, none failed.
	c.waitFor("the four fence devices running with the new passwords", settle, func() (bool, string) {
		_, st, err := c.status("node1")
		if err != nil {
			return false, err.Error()
		}
		var started []string
		for _, r := range st.Resources {
			if strings.HasPrefix(r.ID, "fence-") && r.Role == "Started" && !r.Failed {
				started = append(started, r.ID)
			}
		}
		return len(started) == 4, strings.Join(started, " ")
	})
	if out, err := c.tnfctl("node1", "fence-check", "--target", "node2"); err != nil {
		t.Errorf("fence-check with the new password: %v\n%s", err, out)
	}
	// The device's own credential: its password is cibsecret's, read from the node's secrets.
	if out, err := c.tnfctl("node1", "fence-check", "--device", "fence-node2"); err != nil || !strings.Contains(out, "fence_tnf_redfish: ok") {
		t.Errorf("fence-check --device fence-node2 with the new password: %v\n%s", err, out)
	}
	for _, n := range c.nodes {
		for _, pw := range old {
			if out, err := c.run(n, "grep", "-rlF", pw, "/etc/tnf", "/var/lib/pacemaker"); err == nil {
				t.Errorf("%s still holds an old BMC password in %s", n, strings.TrimSpace(out))
			}
		}
	}
}

// syncWithAdminCredential runs sync-secrets on node with --kubeconfig, an administrator's
// credential, while the node's own is away (as after it expired): the Secrets come with the
// administrator's, and the node's own path is neither written nor renewed.
func (c *cluster) syncWithAdminCredential(node string) (string, error) {
	c.t.Helper()
	h := c.layout.Nodes[node].holder()
	if h == 0 {
		c.t.Fatalf("%s is off", node)
	}
	root := fmt.Sprintf("/proc/%d/root", h)
	own := filepath.Join(root, pkiDir, "node.kubeconfig")
	if err := os.Rename(own, own+".away"); err != nil {
		c.t.Fatal(err)
	}
	defer func() {
		if err := os.Rename(own+".away", own); err != nil {
			c.t.Fatal(err)
		}
	}()
	admin := pkiDir + "/admin.kubeconfig"
	c.write(filepath.Join(root, admin), kubeconfig(c.t, "https://"+net.JoinHostPort(c.ip[node], apiPort), pkiDir+"/ca.crt", c.api.token), 0o600)
	out, err := c.tnfctl(node, "sync-secrets", "--kubeconfig", admin)
	if _, serr := os.Stat(own); !errors.Is(serr, fs.ErrNotExist) || strings.Contains(out, "token") {
		c.t.Errorf("sync-secrets --kubeconfig wrote or renewed the node's own credential (%v):\n%s", serr, out)
	}
	return out, err
}

// TestNodeTokenRenewal: the node's bound token, renewed through the real kube-apiserver's
// TokenRequest with the token itself, as the manifests' Role allows: nothing before half its
// lifetime; past it, a new token of the same lifetime, written in place (0600), which reads the
// node's Secrets. The credential gets no token of another account, and a token that never
// expires is left as it is and reported so.
func TestNodeTokenRenewal(t *testing.T) {
	t.Parallel()
	api := startLoneAPI(t)
	in := secretsInput(t)
	token := applySecrets(t, api.Config("admin"), in)["node1"] // a TokenRequest's, for an hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "node.kubeconfig")
	if err := os.WriteFile(path, kubeconfig(t, api.URL, api.CAFile, token), 0o600); err != nil {
		t.Fatal(err)
	}

	r, err := nodetoken.Renew(ctx, path, time.Now())
	if err != nil || r.Renewed || !r.Before.Bound || r.Before.Account != clusterconfig.NodeServiceAccount("node1") ||
		r.Before.Namespace != clusterconfig.SecretsNamespace || r.Before.Expires.Sub(r.Before.Issued) != time.Hour {
		t.Fatalf("a fresh token: %+v, %v; want it kept, bound, %s/%s, an hour", r, err, clusterconfig.SecretsNamespace, clusterconfig.NodeServiceAccount("node1"))
	}
	r, err = nodetoken.Renew(ctx, path, r.Before.Issued.Add(31*time.Minute))
	if err != nil || !r.Renewed || !r.After.Bound || r.After.Expires.Sub(r.After.Issued) != time.Hour || r.After.Expires.Before(r.Before.Expires) {
		t.Fatalf("past half its lifetime: %+v, %v; want a new token of an hour", r, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the kubeconfig after the renewal: %v, %v", st, err)
	}
	// What the metrics endpoint reads of it (tnf_node_credential_*).
	if got, err := nodetoken.Read(path); err != nil || got != r.After {
		t.Errorf("the renewed kubeconfig reads %+v, %v; want %+v", got, err, r.After)
	}
	node, err := apisecrets.Client(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apisecrets.Fetch(ctx, node, in.Config); err != nil {
		t.Fatalf("the renewed token: %v", err)
	}
	for _, other := range []string{"default", clusterconfig.NodeServiceAccount("node2")} {
		if _, err := node.CoreV1().ServiceAccounts(clusterconfig.SecretsNamespace).CreateToken(ctx, other,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("node1's credential got a token of %s: %v", other, err)
		}
	}

	static := filepath.Join(t.TempDir(), "static.kubeconfig")
	if err := os.WriteFile(static, kubeconfig(t, api.URL, api.CAFile, api.Token("admin")), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(static)
	if r, err := nodetoken.Renew(ctx, static, time.Now().Add(1000*time.Hour)); err != nil || r.Renewed || r.Before.Bound {
		t.Errorf("a token that never expires: %+v, %v; want it left as it is", r, err)
	}
	if after, _ := os.ReadFile(static); !bytes.Equal(before, after) {
		t.Error("a token that never expires was written over")
	}
}

// TestInstallCredential: what tnfctl install-credential writes, against the real kube-apiserver.
// The API's address and CA come from the kubelet's kubeconfig (a stand-in of MCO's); node1's
// token becomes a 0600 kubeconfig that reads node1's Secrets. node2's token for node1, a token
// the API takes for another user, and an API that does not answer each write nothing.
func TestInstallCredential(t *testing.T) {
	t.Parallel()
	api := startLoneAPI(t)
	in := secretsInput(t)
	tokens := applySecrets(t, api.Config("admin"), in)
	ca, err := os.ReadFile(api.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubelet := filepath.Join(dir, "kubelet.kubeconfig")
	if err := os.WriteFile(kubelet, kubeconfig(t, api.URL, api.CAFile, "kubelet-bootstrap-stand-in"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node1 := nodetoken.Account{Namespace: clusterconfig.SecretsNamespace, Name: clusterconfig.NodeServiceAccount("node1")}
	for _, tc := range []struct {
		name, token, server, want string
	}{
		{"the peer's token", tokens["node2"], "", "not openshift-etcd/tnf-node-node1's: each node takes its own"},
		{"another user's", api.Token("admin"), "", "says the token is admin's, not system:serviceaccount:openshift-etcd:tnf-node-node1's"},
		{"no API", tokens["node1"], "https://127.0.0.1:" + freePort(t), "asking https://127.0.0.1:"},
		{"two lines", tokens["node1"] + "\n" + tokens["node1"], "", "one line expected"},
	} {
		path := filepath.Join(dir, "refused", "node.kubeconfig")
		_, err := nodetoken.Install{Path: path, Token: tc.token, For: node1, Server: tc.server, Kubelet: kubelet, Check: true}.Write(ctx, time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), tc.token) {
			t.Errorf("%s: the error holds the token", tc.name)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s: %s written: %v", tc.name, path, err)
		}
	}
	path := filepath.Join(dir, "secrets", "node.kubeconfig")
	tok, err := nodetoken.Install{Path: path, Token: tokens["node1"] + "\n", For: node1, Kubelet: kubelet, Check: true}.Write(ctx, time.Now())
	if err != nil || !tok.Bound || tok.Account != node1.Name {
		t.Fatalf("node1's own token: %+v, %v", tok, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the kubeconfig: %v, %v", st, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("its folder: %v, %v", st, err)
	}
	if data, _ := os.ReadFile(path); !bytes.Contains(data, []byte(base64.StdEncoding.EncodeToString(ca))) {
		t.Errorf("the kubeconfig does not carry the kubelet's CA bundle:\n%s", data)
	}
	client, err := apisecrets.Client(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apisecrets.Fetch(ctx, client, in.Config); err != nil {
		t.Fatalf("the installed credential: %v", err)
	}
}
