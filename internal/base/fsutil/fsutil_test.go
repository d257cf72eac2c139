package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTimeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "since")
	if _, ok, err := ReadTime(path); ok || err != nil {
		t.Fatalf("no file: %v %v, want neither", ok, err)
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	if err := WriteTime(path, at); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := ReadTime(path); !ok || err != nil || !got.Equal(at) {
		t.Fatalf("read back %v %v %v, want %v", got, ok, err, at)
	}
	if err := os.WriteFile(path, []byte("yesterday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadTime(path); ok || err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("garbled: %v %v, want an error naming the file", ok, err)
	}
}
