package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEntryPointStaysLean: the entry point must not link etcd, gRPC, Kubernetes or procfs
// packages, whose initialisation alone costs more than the whole fast monitor.
func TestEntryPointStaysLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"go.etcd.io/", "google.golang.org/grpc", "k8s.io/", "go.uber.org/zap", "github.com/prometheus/procfs"} {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("the entry point links %s", dep)
			}
		}
	}
}
