//go:build integration

package etcdagent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// TestRejoinMakesRoom: the joining node's data dir is on a 300 MiB disk of its own. Each rejoin
// moves its data dir aside (about 61 MiB on this disk, most of it etcd's preallocated log) and
// receives the peer's database with room for its log (128 MiB). The disk cannot keep
// backup_count (3) copies: from the third rejoin the agent deletes copies early, the oldest
// first, counts it for tnfctl status and the metrics, and every rejoin succeeds with every
// acknowledged key.
func TestRejoinMakesRoom(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	c := newCluster(t)
	joiner := c.nodes["node2"]
	disk := filepath.Join(joiner.dir, "disk")
	if err := os.MkdirAll(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, "size=300m"); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last in, first out: this one before the nodes are powered off, so lazily.
	t.Cleanup(func() { _ = unix.Unmount(disk, unix.MNT_DETACH) })
	joiner.params["data_dir"] = filepath.Join(disk, "etcd")

	leader, other := formCluster(t, c)
	if other != joiner {
		t.Fatalf("%s led the cold boot, want node1 (it wins the tie)", leader.name)
	}
	acked := writeKeys(t, leader, 0, 20)
	var seen []string // every copy moved aside, in order
	for range 4 {
		joiner.must("stop", ocfSuccess)
		leader.notify("stop", joiner.name)
		joiner.must("start", ocfSuccess)
		catchUpAndPromote(t, joiner, leader)
		copies, err := etcddata.Copies(joiner.params["data_dir"])
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range copies {
			if !slices.Contains(seen, cp.Path) {
				seen = append(seen, cp.Path)
			}
		}
	}
	sameKeys(t, joiner, acked)

	kept, err := etcddata.Copies(joiner.params["data_dir"])
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := c.store.Get(context.Background(), joiner.name, etcdnode.AttrCopiesDropped, attrs.Reboot)
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := etcdnode.ParseTally(etcdnode.AttrCopiesDropped, v)
	if err != nil || dropped.Count == 0 {
		t.Fatalf("%s: %q (%v): want copies counted as deleted early", etcdnode.AttrCopiesDropped, v, err)
	}
	var keptPaths []string
	for _, cp := range kept {
		keptPaths = append(keptPaths, cp.Path)
	}
	if len(kept) == 0 || len(kept) >= 3 || !slices.Equal(keptPaths, seen[len(seen)-len(kept):]) {
		t.Fatalf("copies kept %v of %v: want fewer than backup_count, the newest, at least one", keptPaths, seen)
	}
	t.Logf("%d copies moved aside in 4 rejoins, %d deleted early to make room, the newest %d kept", len(seen), dropped.Count, len(kept))
}
