package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileTail: regular files are read (their end, when long); a link or a FIFO in their place
// is refused, not followed or waited on.
func TestFileTail(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "shadow")
	if err := os.WriteFile(secret, []byte("root:secret-hash:"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "pacemaker.log")
	if err := os.WriteFile(log, []byte(strings.Repeat("x", gatherItemLimit)+"end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if data, err := fileTail(log)(ctx); err != nil || len(data) != gatherItemLimit || !strings.HasSuffix(string(data), "end\n") {
		t.Errorf("log: %d bytes, %v", len(data), err)
	}
	for _, path := range []string{link, fifo} {
		data, err := fileTail(path)(ctx)
		if err == nil || strings.Contains(string(data), "secret-hash") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %q, %v", path, data, err)
		}
	}
}

// TestKubeconfigSecrets: what a kubeconfig authenticates with is scrubbed: its token, and its
// client key as the file holds it (base64) and as PEM lines.
func TestKubeconfigSecrets(t *testing.T) {
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yRxO+KtD4Qc7wm9r0Fq4YfN3s0qoAoGCCqGSM49\nAwEHoUQDQgAEr9lJ0r3QmB6D4a2XnBY1uN0bV1L5w8tN+6QeLQfYfF2m5PmqkTc4\n-----END EC PRIVATE KEY-----\n"
	encoded := base64.StdEncoding.EncodeToString([]byte(key))
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://localhost:6443}}]\n" +
		"users: [{name: admin, user: {client-key-data: " + encoded + "}}, {name: sa, user: {token: sha256~Zm9vYmFyYmF6cXV4cXV1eA}}]\n" +
		"contexts: [{name: x, context: {cluster: c, user: admin}}]\ncurrent-context: x\n"
	path := filepath.Join(t.TempDir(), "localhost.kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := kubeconfigSecrets(path)
	for _, want := range []string{"sha256~Zm9vYmFyYmF6cXV4cXV1eA", encoded, "MHcCAQEEIBkg4LVWM9nuwNSk3yRxO+KtD4Qc7wm9r0Fq4YfN3s0qoAoGCCqGSM49"} {
		found := false
		for _, s := range secrets {
			found = found || string(s) == want
		}
		if !found {
			t.Errorf("%.20s… is not scrubbed", want)
		}
	}
}
