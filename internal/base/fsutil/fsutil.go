// Package fsutil writes files so that readers never see them half-written (a time among them),
// reads such a time back, and removes files.
package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteFileAtomic writes data to a temporary file beside path, sets mode, syncs it, renames it
// over path and syncs the folder: after a power cut path holds the old data or the new, never
// an empty file (a file system may otherwise commit the rename before the data).
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	for _, step := range []func() error{
		func() error { _, err := tmp.Write(data); return err },
		func() error { return tmp.Chmod(mode) },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the entries of dir durable: a file created, renamed or removed in it.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Holds says whether path exists and holds exactly data.
func Holds(path string, data []byte) bool {
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data)
}

// WriteFileIfChanged writes data with mode (WriteFileAtomic) unless path holds it with that mode
// already, and says whether it wrote.
func WriteFileIfChanged(path string, data []byte, mode os.FileMode) (bool, error) {
	if Holds(path, data) {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm() == mode {
			return false, nil
		}
	}
	return true, WriteFileAtomic(path, data, mode)
}

// RemoveIfExists removes path; a path that is already gone is not an error.
func RemoveIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ReadTime reads a time WriteTime wrote to path: false when there is no such file; an error,
// naming path, when it cannot be read or holds no time.
func ReadTime(path string) (time.Time, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return t, true, nil
}

// WriteTime writes t to path (RFC 3339, UTC, a line), its folder made if needed, atomically.
func WriteTime(path string, t time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(path, []byte(t.UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
}
