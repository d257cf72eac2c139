package main

import (
	"context"
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
