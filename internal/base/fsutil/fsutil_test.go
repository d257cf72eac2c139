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

// TestWriteFileIfChanged: a file is written when it is missing, holds other data or has another
// mode, and left alone when it holds the data with the mode.
func TestWriteFileIfChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	for i, step := range []struct {
		data        string
		mode        os.FileMode
		wantWritten bool
	}{
		{"one", 0o600, true},  // missing
		{"one", 0o600, false}, // the same
		{"two", 0o600, true},  // other data
		{"two", 0o644, true},  // another mode
		{"two", 0o644, false},
	} {
		written, err := WriteFileIfChanged(path, []byte(step.data), step.mode)
		if err != nil || written != step.wantWritten {
			t.Fatalf("step %d: written %v, %v; want %v", i, written, err, step.wantWritten)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != step.mode || !Holds(path, []byte(step.data)) {
			t.Fatalf("step %d: %v %v", i, st, err)
		}
	}
}
