package etcddata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Copy is a data dir moved aside (MoveAside) and the bytes its files take on the disk (what
// deleting it frees: etcd's preallocated log segments take less than their length on some file
// systems).
type Copy struct {
	Path  string
	Bytes uint64
}

// Copies lists what was moved aside from dataDir, beside it or inside it (a mount point), oldest
// first.
func Copies(dataDir string) ([]Copy, error) {
	dataDir = filepath.Clean(dataDir)
	var paths []string
	for _, pattern := range []string{dataDir + backupInfix + "*", filepath.Join(dataDir, insidePrefix+"*")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	// Both names end in the same timestamp, which sorts by time.
	stamp := func(p string) string {
		b := filepath.Base(p)
		if i := strings.LastIndex(b, backupInfix); i >= 0 {
			return b[i+len(backupInfix):]
		}
		return strings.TrimPrefix(b, insidePrefix)
	}
	sort.Slice(paths, func(i, j int) bool { return stamp(paths[i]) < stamp(paths[j]) })
	copies := make([]Copy, 0, len(paths))
	for _, p := range paths {
		n, err := treeBytes(p)
		if err != nil {
			return nil, fmt.Errorf("measuring the moved-aside data %s: %w", p, err)
		}
		copies = append(copies, Copy{Path: p, Bytes: n})
	}
	return copies, nil
}

// treeBytes is the bytes the regular files under root take on the disk.
func treeBytes(root string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += uint64(st.Blocks) * 512 // stat's blocks are 512 bytes, whatever the file system's
		} else {
			n += uint64(info.Size())
		}
		return nil
	})
	return n, err
}

// Free is the room, in bytes, left for the data dir's data on the file system that holds it (the
// data dir, or its nearest folder that exists).
func Free(dataDir string) (uint64, error) {
	dir := filepath.Clean(dataDir)
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		}
		if !errors.Is(err, unix.ENOENT) || dir == filepath.Dir(dir) {
			return 0, fmt.Errorf("reading the room left on %s's file system: %w", dataDir, err)
		}
		dir = filepath.Dir(dir)
	}
}

// PlanRoom says which moved-aside copies (oldest first) to delete so that need bytes fit beside
// free: the oldest go first and the newest last, each only while the room is short, and never
// the one named keep. enough is false when they do not fit even without every other copy.
func PlanRoom(free, need uint64, copies []Copy, keep string) (drop []Copy, enough bool) {
	for _, c := range copies {
		if free >= need {
			break
		}
		if keep != "" && c.Path == keep {
			continue
		}
		drop = append(drop, c)
		free += c.Bytes
	}
	return drop, free >= need
}

// ErrNoRoom: the data dir's file system cannot hold the new member's data, even without the
// data moved aside.
var ErrNoRoom = errors.New("no room for the new member's data")

// MakeRoom makes room for need bytes of a new member's data on dataDir's file system by deleting
// moved-aside copies as PlanRoom says, never keep (a copy that is the only one of writes an
// administrator gave up), and returns those it deleted. When they do not fit even so, it deletes
// nothing and returns an error wrapping ErrNoRoom that names both figures.
func MakeRoom(dataDir string, need uint64, keep string) ([]Copy, error) {
	free, err := Free(dataDir)
	if err != nil {
		return nil, err
	}
	copies, err := Copies(dataDir)
	if err != nil {
		return nil, err
	}
	drop, enough := PlanRoom(free, need, copies, keep)
	if !enough {
		var held uint64
		for _, c := range copies {
			held += c.Bytes
		}
		kept := ""
		if keep != "" {
			kept = fmt.Sprintf(" (%s, the only copy of the writes an administrator gave up, is never deleted for room)", keep)
		}
		return nil, fmt.Errorf("%w: %s's file system has %d MiB left and %d MiB in %d moved-aside copies%s, the new member needs about %d MiB",
			ErrNoRoom, dataDir, free>>20, held>>20, len(copies), kept, need>>20)
	}
	var dropped []Copy
	for _, c := range drop {
		if err := os.RemoveAll(c.Path); err != nil {
			return dropped, fmt.Errorf("deleting the moved-aside data %s to make room: %w", c.Path, err)
		}
		dropped = append(dropped, c)
	}
	return dropped, nil
}
