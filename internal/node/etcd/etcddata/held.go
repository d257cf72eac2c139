package etcddata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Held names the first file of the data directory that a running etcd holds ("" when none).
// etcd locks every WAL file it may write (an open file description lock, where the kernel has
// them) and its backend (flock) until its stop closes them; a member launched while another
// still holds them fails at its start ("file already locked"). Its client and peer listeners
// close earlier in its stop, so free ports do not say the data is free. The locks are asked
// for, never kept: a lock kept here would be one an etcd's start runs into.
func Held(dataDir string) (string, error) {
	wals, err := filepath.Glob(filepath.Join(walDir(dataDir), "*.wal"))
	if err != nil {
		return "", err
	}
	for _, p := range wals {
		if held, err := locked(p, walLocked); err != nil || held {
			return p, err
		}
	}
	db := backendFile(dataDir)
	// bbolt's flock, exclusive while etcd has the backend open for writing.
	if held, err := locked(db, flockHeld); err != nil || held {
		return db, err
	}
	return "", nil
}

// walLocked asks the kernel whether another open file description holds a lock on a WAL file,
// as etcd's fileutil takes it (write lock, whole file); etcd falls back to flock where the
// kernel has no such locks.
func walLocked(f *os.File) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	switch err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); {
	case errors.Is(err, unix.EINVAL):
		return flockHeld(f)
	case err != nil:
		return false, fmt.Errorf("%s: asking for its lock: %w", f.Name(), err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

// locked opens path and asks held about it; a file that is gone is held by nobody (etcd cuts and
// renames its WAL files itself: the next look asks again).
func locked(path string, held func(*os.File) (bool, error)) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	return held(f)
}

// flockHeld tries a shared flock without waiting and gives it back at once: refused, a
// process holds the file exclusively.
func flockHeld(f *os.File) (bool, error) {
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("%s: asking for its lock: %w", f.Name(), err)
	}
	return false, unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
