package kubeconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRequestsAreBounded: an API server that takes a request and never answers fails the
// request at the client's bound; the client names itself.
func TestRequestsAreBounded(t *testing.T) {
	seen := make(chan string, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.UserAgent():
		default:
		}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	cfg, err := Load(writeKubeconfig(t, srv.URL), "tnf-test", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().Secrets("openshift-etcd").Get(context.Background(), "x", metav1.GetOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a request to an API that never answered succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a request to an API that never answers is not bounded")
	}
	if ua := <-seen; ua != "tnf-test" {
		t.Errorf("user agent %q", ua)
	}
}

// TestRefusesSharedFile: a kubeconfig that its group or others may read or write, or that is not
// root's, is refused with a message that names the file and the fix.
func TestRefusesSharedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root's files: the test runs as root")
	}
	for _, c := range []struct {
		name string
		mode os.FileMode
		uid  int
		want string // "" when loaded
	}{
		{"root's, 0600", 0o600, 0, ""},
		{"root's, 0400", 0o400, 0, ""},
		{"group may read", 0o640, 0, "mode 0640 lets others than its owner read it"},
		{"anyone may read", 0o644, 0, "chmod 600"},
		{"anyone may write", 0o602, 0, "mode 0602"},
		{"another user's", 0o600, 1000, "owned by uid 1000, not root"},
	} {
		path := writeKubeconfig(t, "https://127.0.0.1:6443")
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, c.uid, 0); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, "tnf-test", 0)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: %v, want an error naming %s with %q", c.name, err, path, c.want)
		}
	}
}

// writeKubeconfig writes a kubeconfig of a token for server, root's 0600, and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + server + "}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
