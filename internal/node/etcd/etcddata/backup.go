package etcddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
)

const (
	// backupInfix names a data dir moved aside beside the data dir.
	backupInfix = ".moved-"
	// insidePrefix names data moved aside inside a data dir that is a mount point: a mount point
	// cannot be renamed (EBUSY), and its sibling is on another file system.
	insidePrefix = "tnf-moved-"
	// lostFound is what mkfs leaves at the top of an ext file system.
	lostFound = "lost+found"
	// staging names a restore being built inside a data dir that is a mount point.
	staging = "tnf-restoring"
)

// skippedAtTop says a top-level entry of a data dir is none of etcd's: a file system's
// lost+found, data moved aside inside a mount point, a restore being built there.
func skippedAtTop(name string) bool {
	return name == lostFound || name == staging || strings.HasPrefix(name, insidePrefix)
}

// MoveAside moves the data directory's data to a timestamped place and deletes the oldest such
// places so that at most keep remain. A data dir is renamed to a sibling; a mount point keeps
// its place and its entries move into a folder inside it. A missing directory is not an error.
// It returns where the data went ("" when there was nothing to move).
func MoveAside(dataDir string, keep int, now time.Time) (string, error) {
	dataDir = filepath.Clean(dataDir)
	if _, err := os.Lstat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	mounted, err := mountinfo.Mounted(dataDir)
	if err != nil {
		return "", fmt.Errorf("moving %s aside: telling whether it is a mount point: %w", dataDir, err)
	}
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	if !mounted {
		dest := dataDir + backupInfix + stamp
		if err := os.Rename(dataDir, dest); err != nil {
			return "", fmt.Errorf("moving %s aside: %w", dataDir, err)
		}
		return dest, prune(dataDir+backupInfix+"*", keep)
	}
	dest := filepath.Join(dataDir, insidePrefix+stamp)
	moved, err := moveEntries(dataDir, dest)
	if err != nil || !moved {
		return "", err
	}
	return dest, prune(filepath.Join(dataDir, insidePrefix+"*"), keep)
}

// moveEntries moves every top-level entry of etcd's in dir into the new folder dest (removed
// again when there was none). moved says something was.
func moveEntries(dir, dest string) (moved bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("moving %s's data aside: %w", dir, err)
	}
	if err := os.Mkdir(dest, 0o700); err != nil {
		return false, fmt.Errorf("moving %s's data aside: %w", dir, err)
	}
	for _, e := range entries {
		if skippedAtTop(e.Name()) {
			continue
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dest, e.Name())); err != nil {
			return moved, fmt.Errorf("moving %s's data aside: %w", dir, err)
		}
		moved = true
	}
	if !moved {
		return false, os.Remove(dest)
	}
	return true, nil
}

// prune deletes the oldest backups matching pattern so that at most keep remain.
func prune(pattern string, keep int) error {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return err
	}
	// The timestamp format sorts by time.
	sort.Strings(matches)
	var errs []error
	for len(matches) > keep {
		errs = append(errs, os.RemoveAll(matches[0]))
		matches = matches[1:]
	}
	return errors.Join(errs...)
}
