package etcddata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// forceMark, at a data dir's top, marks a forced start of the data as begun (CommitTail) and not
// yet seen through (ForceServed). It moves aside with the data. etcd logs it as a file of none
// of its own at the forced start, as it does the data moved aside inside a mount point.
const forceMark = "tnf-forcing"

// markForce marks dataDir's force as begun, durably: the WAL's change that follows must never
// be on disk without it.
func markForce(dataDir string) error {
	if err := fsutil.WriteFileAtomic(filepath.Join(dataDir, forceMark), nil, 0o600); err != nil {
		return fmt.Errorf("marking the force begun: %w", err)
	}
	return nil
}

// ForceServed takes the mark of a begun force away once the forced member has served: its WAL
// then holds the peer's removal, which etcd writes before it serves. None is no error.
func ForceServed(dataDir string) error {
	if err := fsutil.RemoveIfExists(filepath.Join(dataDir, forceMark)); err != nil {
		return fmt.Errorf("removing the mark of a force begun: %w", err)
	}
	if err := fsutil.SyncDir(dataDir); err != nil {
		return fmt.Errorf("removing the mark of a force begun: %w", err)
	}
	return nil
}

// forceBegun says whether dataDir holds the mark of a begun force. A mark that cannot be looked
// at is an error, never "none": none would let the data start beside the peer's member.
func forceBegun(dataDir string) (bool, error) {
	switch _, err := os.Lstat(filepath.Join(dataDir, forceMark)); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("%s: %w", dataDir, err)
	}
}
