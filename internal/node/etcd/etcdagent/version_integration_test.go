//go:build integration

package etcdagent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

// TestEtcdVersionKept: the version of the node's etcd is run once per binary and kept in the
// state dir: an agent of a later action reads what was kept, and a binary replaced (its size or
// time changed) is run again.
func TestEtcdVersionKept(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "etcd")
	data, err := os.ReadFile(testbin.Etcd(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := func() *Agent {
		return &Agent{rt: etcdrun.NewExec(bin, "", ""), cfg: etcdnode.Config{StateDir: dir}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	ctx := context.Background()
	v := agent().etcdVersion(ctx)
	if v == "" {
		t.Fatal("no version read")
	}
	// What is kept is what a later action reads: a stand-in value under the same key shows it.
	key, err := etcdrun.NewExec(bin, "", "").VersionKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent().versionFile(), []byte(key+"\n9.9.9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := agent().etcdVersion(ctx); got != "9.9.9" {
		t.Errorf("a later action read %q, not the kept version", got)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	if got := agent().etcdVersion(ctx); got != v {
		t.Errorf("a replaced binary read %q, want %q run again", got, v)
	}
}
