package etcddata

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/moby/sys/mountinfo"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	etcdmembership "go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	"go.uber.org/zap"
)

// RevisionBump is how far a restore raises the keyspace revision: the value etcd's recovery guide
// gives. The given-up peer may have served revisions beyond the restored data's; a client (the
// API server's watch cache) must never see a revision go back, and a restored revision that is
// marked compacted makes every watch from an older revision re-list.
const RevisionBump = 1_000_000_000

// Restored describes a restore: where the old data went and the new cluster's identity.
type Restored struct {
	Backup string // the moved-aside old data dir
	Token  string // the initial cluster token that makes the new cluster ID unique
}

// RestoreAsNewCluster turns the data dir into a one-member cluster of its own keyspace (what
// `etcdutl snapshot restore` does with a member's backend, member/snap/db): a new cluster ID, one
// member named name at peerURL, the revision raised by RevisionBump and marked compacted. It
// works on any stopped member's data, also a removed member's, on which etcd's
// --force-new-cluster cannot run. The old data dir is moved aside (MoveAside, keeping keep).
func RestoreAsNewCluster(dataDir, name, peerURL string, keep int, now time.Time) (Restored, error) {
	dataDir = filepath.Clean(dataDir)
	db := backendFile(dataDir)
	if _, err := os.Stat(db); err != nil {
		return Restored{}, fmt.Errorf("restoring %s: %w", dataDir, err)
	}
	// The token is hashed into the member and cluster IDs: one that was never used before gives
	// a cluster ID the given-up peer's data can never match.
	token := NewRestoreToken(now)
	// A live backend has no snapshot hash appended.
	backup, err := restoreInto(dataDir, snapshot.RestoreConfig{SnapshotPath: db, SkipHashCheck: true, RevisionBump: RevisionBump},
		name, peerURL, token, keep, now)
	return Restored{Backup: backup, Token: token}, err
}

// RestoreSnapshot makes the data dir a one-member cluster of the snapshot file's keyspace, as
// `etcdutl snapshot restore --bump-revision bump --mark-compacted` does: one member named name
// at peerURL, the cluster ID that token gives (RestoredClusterID: the same for a restore run
// again). As it copies the file, etcdutl checks the content against the SHA-256 at its end; the
// caller checks that hash is the one it checked before (SnapshotIs). Data already in the data dir
// is moved aside and kept: a restore deletes no copy.
func RestoreSnapshot(snapshotPath, dataDir, name, peerURL, token string, bump uint64, now time.Time) (Restored, error) {
	backup, err := restoreInto(filepath.Clean(dataDir), snapshot.RestoreConfig{SnapshotPath: snapshotPath, RevisionBump: bump},
		name, peerURL, token, math.MaxInt, now)
	return Restored{Backup: backup, Token: token}, err
}

// NewRestoreToken is an initial cluster token never used before.
func NewRestoreToken(now time.Time) string {
	return "tnf-restore-" + strconv.FormatInt(now.UnixNano(), 36)
}

// RestoredClusterID is the ID of the cluster a restore with token gives a member named name at
// peerURL.
func RestoredClusterID(name, peerURL, token string) (uint64, error) {
	urls, err := types.NewURLsMap(name + "=" + peerURL)
	if err != nil {
		return 0, err
	}
	c, err := etcdmembership.NewClusterFromURLsMap(zap.NewNop(), token, urls)
	if err != nil {
		return 0, err
	}
	return uint64(c.ID()), nil
}

// restoreInto builds the restore cfg names (its source, hash check and bump; the revision is
// always marked compacted) beside the data dir, then moves the data dir's data aside (keeping
// keep) and puts the new data in its place. The new data is complete before the old moves, so a
// restore interrupted before that leaves the old data in place; one interrupted between the two
// leaves it moved aside and the new data staged, and the data dir reads as no data (the peer's
// record or the served cluster then keeps any node from creating a cluster; the administrator
// finds both folders, or the restore run again builds it anew). It returns where the old data went.
func restoreInto(dataDir string, cfg snapshot.RestoreConfig, name, peerURL, token string, keep int, now time.Time) (string, error) {
	mounted, err := mountinfo.Mounted(dataDir)
	if err != nil {
		return "", fmt.Errorf("restoring %s: telling whether it is a mount point: %w", dataDir, err)
	}
	// The new data is built on the data dir's own file system, to be renamed into place.
	staged := dataDir + ".restoring"
	if mounted {
		staged = filepath.Join(dataDir, staging)
	}
	if err := os.RemoveAll(staged); err != nil {
		return "", err
	}
	cfg.Name, cfg.OutputDataDir, cfg.PeerURLs = name, staged, []string{peerURL}
	cfg.InitialCluster, cfg.InitialClusterToken, cfg.MarkCompacted = name+"="+peerURL, token, true
	if err := snapshot.NewV3(zap.NewNop()).Restore(cfg); err != nil {
		os.RemoveAll(staged)
		return "", fmt.Errorf("restoring %s as a new cluster: %w", dataDir, err)
	}
	backup, err := MoveAside(dataDir, keep, now)
	if err != nil {
		return "", err
	}
	if mounted {
		err = os.Rename(filepath.Join(staged, "member"), filepath.Join(dataDir, "member"))
	} else {
		err = os.Rename(staged, dataDir)
	}
	if err != nil {
		return "", fmt.Errorf("putting the restored data in place: %w", err)
	}
	// The data is in place; an empty staging folder left behind is skipped (skippedAtTop).
	_ = os.Remove(staged)
	return backup, nil
}
