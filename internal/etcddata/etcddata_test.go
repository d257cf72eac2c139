package etcddata

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestInspectMissing(t *testing.T) {
	info, err := Inspect(filepath.Join(t.TempDir(), "nothing"))
	if err != nil || info.Present {
		t.Fatalf("missing dir: %+v, %v", info, err)
	}
}

func TestMoveAsideKeepsNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var moved []string
	for i := 0; i < 5; i++ {
		if err := os.MkdirAll(filepath.Join(dir, "member"), 0o700); err != nil {
			t.Fatal(err)
		}
		to, err := MoveAside(dir, 3, base.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, to)
	}
	left, _ := filepath.Glob(dir + backupInfix + "*")
	if len(left) != 3 {
		t.Fatalf("%d kept, want 3: %v", len(left), left)
	}
	for i, m := range moved {
		_, err := os.Stat(m)
		if kept := err == nil; kept != (i >= 2) {
			t.Errorf("backup %d (%s) kept=%v", i, m, kept)
		}
	}
	if to, err := MoveAside(dir, 3, base); err != nil || to != "" {
		t.Fatalf("moving a missing dir: %q, %v", to, err)
	}
}
