package kubeconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, "tnf-test", 200*time.Millisecond)
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
