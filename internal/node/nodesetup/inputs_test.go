package nodesetup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// TestInputsDigest: the digest changes with cluster.yaml and with each file it names (its
// content, its arrival), and with nothing else.
func TestInputsDigest(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, data string) {
		if err := os.WriteFile(file(name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clusterconfig.Config{CorosyncAuthkeyFile: file("authkey"), Nodes: []clusterconfig.Node{
		{Name: "node1", BMC: clusterconfig.BMC{PasswordFile: file("node1.password"), CAFile: file("node1.pem")}},
		{Name: "node2", BMC: clusterconfig.BMC{PasswordFile: file("node2.password")}}}}
	write("cluster.yaml", "clusterName: a\n")
	write("authkey", "key")
	write("node1.password", "one")
	write("node2.password", "two")
	digest := func() string {
		config, err := os.ReadFile(file("cluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := InputsDigest(config, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	seen := map[string]string{digest(): "the first inputs"}
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"cluster.yaml changed", func() { write("cluster.yaml", "clusterName: b\n") }},
		{"a BMC password changed", func() { write("node2.password", "three") }},
		{"a CA bundle arrived", func() { write("node1.pem", "ca") }},
		{"the Corosync key changed", func() { write("authkey", "other") }},
		// The boundary between two files moved: the same bytes in all, split otherwise.
		{"bytes moved between files", func() { write("node1.password", "on"); write("node2.password", "ethree") }},
	} {
		change.do()
		d := digest()
		if before, ok := seen[d]; ok {
			t.Errorf("%s: the digest of %s", change.what, before)
		}
		seen[d] = change.what
	}
	write("unnamed", "a file the configuration does not name")
	if _, ok := seen[digest()]; !ok {
		t.Error("a file the configuration does not name changed the digest")
	}
}

// TestDecideRun: every state of the markers against the inputs of today.
func TestDecideRun(t *testing.T) {
	const now, before = "sha256:22", "sha256:11"
	for _, tc := range []struct {
		name            string
		failed, pending bool
		m               marker
		want            runDecision
	}{
		{"never completed", false, false, marker{}, runSetup},
		{"never completed, failed", true, false, marker{}, runSetup},
		{"completed with these inputs", false, false, marker{Exists: true, Digest: now}, skipRun},
		{"completed with these inputs, a Corosync setting pending", false, true, marker{Exists: true, Digest: now}, runSetup},
		{"completed with other inputs", false, false, marker{Exists: true, Digest: before}, runSetup},
		{"completed with these inputs, a run failed since", true, false, marker{Exists: true, Digest: now}, runSetup},
		{"completed by a release that recorded no digest", false, false, marker{Exists: true}, adoptInputs},
		{"completed by such a release, a run failed since", true, false, marker{Exists: true}, runSetup},
	} {
		if got := decideRun(tc.failed, tc.pending, tc.m, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
