package etcddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

const backupInfix = ".moved-"

// MoveAside renames the data directory to a timestamped sibling and deletes the oldest such
// siblings so that at most keep remain. A missing directory is not an error. It returns the new
// path ("" when there was nothing to move).
func MoveAside(dataDir string, keep int, now time.Time) (string, error) {
	dataDir = filepath.Clean(dataDir)
	if _, err := os.Lstat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	dest := dataDir + backupInfix + now.UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(dataDir, dest); err != nil {
		return "", fmt.Errorf("moving %s aside: %w", dataDir, err)
	}
	return dest, prune(dataDir, keep)
}

func prune(dataDir string, keep int) error {
	matches, err := filepath.Glob(dataDir + backupInfix + "*")
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
