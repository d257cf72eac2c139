//go:build integration

package etcddata

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testetcd"
)

// TestSnapshotRead: a snapshot etcdctl snapshot save took of a real etcd is read whole (its
// revision, its member, the newest value of each key, deletions), and copies of it cut short,
// altered, or a database that is no etcd's with a matching hash, are refused as not a snapshot.
// Restored, it is a new cluster of one with the cluster ID RestoredClusterID gives, its revision
// raised and the old revisions compacted, whatever stood in the data dir moved aside and kept.
func TestSnapshotRead(t *testing.T) {
	dir := t.TempDir()
	cli, endpoint := testetcd.Start(t, filepath.Join(dir, "source"), "n1", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, op := range []clientv3.Op{clientv3.OpPut("/a", "1"), clientv3.OpPut("/b", "2"), clientv3.OpDelete("/b"), clientv3.OpPut("/a", "3")} {
		if _, err := cli.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "snapshot.db")
	testetcd.Snapshot(t, endpoint, file)
	snap, err := ReadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Revision != resp.Header.Revision || len(snap.Members) != 1 || snap.Members[0].Name != "n1" || len(snap.SHA256) != 64 {
		t.Errorf("read %+v, want revision %d and member n1", snap, resp.Header.Revision)
	}
	values, err := SnapshotValues(file, "/a", "/b", "/c")
	if err != nil || len(values) != 1 || string(values["/a"]) != "3" {
		t.Errorf("values %q, %v; want /a=3 alone (/b deleted, /c never written)", values, err)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	notBolt := make([]byte, 4096)
	sum := sha256.Sum256(notBolt)
	altered := append([]byte(nil), data...)
	altered[len(altered)/2] ^= 0xff
	for name, content := range map[string][]byte{
		"cut short":                 data[:len(data)-100],
		"cut at a page":             data[:len(data)-4096],
		"altered":                   altered,
		"no etcd database, hashed":  append(notBolt, sum[:]...),
		"the database without hash": data[:len(data)-sha256.Size],
	} {
		p := filepath.Join(dir, "bad.db")
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSnapshot(p); !errors.Is(err, ErrNotASnapshot) {
			t.Errorf("%s: %v, want ErrNotASnapshot", name, err)
		}
	}

	target := filepath.Join(dir, "target")
	for i := range 5 { // more copies than any backup_count: a restore deletes none
		if err := os.MkdirAll(filepath.Join(target, "member", "snap"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := MoveAside(target, 100, time.Unix(int64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(target, "member", "snap"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "member", "snap", "db"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	const bump = 1000
	token := NewRestoreToken(time.Now())
	peerURL := "http://127.0.0.1:2380"
	restored, err := RestoreSnapshot(file, target, "n1", peerURL, token, bump, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile(filepath.Join(restored.Backup, "member", "snap", "db")); err != nil || string(old) != "old" {
		t.Errorf("the old data moved aside to %s: %q, %v", restored.Backup, old, err)
	}
	if copies, err := Copies(target); err != nil || len(copies) != 6 {
		t.Errorf("%d copies kept, want 6: %v", len(copies), err)
	}
	info, err := Inspect(target)
	want, werr := RestoredClusterID("n1", peerURL, token)
	if err != nil || werr != nil || info.ClusterID != want {
		t.Errorf("restored cluster %x (%v), want %x (%v)", info.ClusterID, err, want, werr)
	}
	if rev, err := BackendRevision(target); err != nil || rev != snap.Revision+bump {
		t.Errorf("restored revision %d, %v; want %d", rev, err, snap.Revision+bump)
	}

	cli2, _ := testetcd.Start(t, target, "n1", false)
	got, err := cli2.Get(ctx, "/a")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "3" || got.Header.Revision <= snap.Revision+bump-1 {
		t.Fatalf("restored etcd: %v, %v", got, err)
	}
	if _, err := cli2.Get(ctx, "/a", clientv3.WithRev(snap.Revision)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("a read at the snapshot's revision: %v, want it compacted", err)
	}
}
