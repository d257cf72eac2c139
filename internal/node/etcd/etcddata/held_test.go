package etcddata

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/client/pkg/v3/fileutil"
)

// TestHeld: a data dir is held while a WAL file or the backend is locked the way etcd locks them
// (its own fileutil and bbolt, from another open file as another process would), and free once
// they are closed. Asking takes nothing: etcd's lock is taken right after.
func TestHeld(t *testing.T) {
	dir := t.TempDir()
	wal := filepath.Join(walDir(dir), "0000000000000000-0000000000000000.wal")
	db := filepath.Join(snapDir(dir), "db")
	for _, p := range []string{wal, db} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(wal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	free := func(when string) {
		t.Helper()
		if got, err := Held(dir); got != "" || err != nil {
			t.Fatalf("%s: held by %q (%v), want free", when, got, err)
		}
	}
	free("no etcd, no backend yet")

	locked, err := fileutil.TryLockFile(wal, os.O_RDWR, fileutil.PrivateFileMode)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Held(dir); got != wal || err != nil {
		t.Fatalf("WAL locked: held by %q (%v), want %s", got, err, wal)
	}
	locked.Close()
	free("WAL closed")

	b, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Held(dir); got != db || err != nil {
		t.Fatalf("backend open: held by %q (%v), want %s", got, err, db)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	free("backend closed")

	// What etcd does right after the agent asked: both locks are its to take.
	locked, err = fileutil.TryLockFile(wal, os.O_RDWR, fileutil.PrivateFileMode)
	if err != nil {
		t.Fatalf("the WAL's lock after asking: %v", err)
	}
	defer locked.Close()
	b, err = bolt.Open(db, 0o600, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("the backend's lock after asking: %v", err)
	}
	b.Close()
}
