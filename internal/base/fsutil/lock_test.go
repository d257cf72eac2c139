package fsutil

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestLock: a second holder waits until the first releases, and gives up at its deadline.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second lock while held: %v, want the deadline", err)
	}
	unlock()
	again, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("the lock once released: %v", err)
	}
	again()
}
