package etcddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/moby/sys/mountinfo"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
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
// --force-new-cluster cannot run. The old data dir is moved aside (MoveAside, keeping keep) only
// once the new one is complete, so a restore interrupted before that leaves the old data in
// place; one interrupted between the two leaves it moved aside and the new data staged, and the
// data dir reads as no data (the peer's record or the served cluster then keeps any node from
// creating a cluster; the administrator finds both folders).
func RestoreAsNewCluster(dataDir, name, peerURL string, keep int, now time.Time) (Restored, error) {
	dataDir = filepath.Clean(dataDir)
	db := backendFile(dataDir)
	if _, err := os.Stat(db); err != nil {
		return Restored{}, fmt.Errorf("restoring %s: %w", dataDir, err)
	}
	mounted, err := mountinfo.Mounted(dataDir)
	if err != nil {
		return Restored{}, fmt.Errorf("restoring %s: telling whether it is a mount point: %w", dataDir, err)
	}
	// The new data is built on the data dir's own file system, to be renamed into place.
	staged := dataDir + ".restoring"
	if mounted {
		staged = filepath.Join(dataDir, staging)
	}
	if err := os.RemoveAll(staged); err != nil {
		return Restored{}, err
	}
	// The token is hashed into the member and cluster IDs: one that was never used before gives
	// a cluster ID the given-up peer's data can never match.
	token := "tnf-restore-" + strconv.FormatInt(now.UnixNano(), 36)
	err = snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        db,
		Name:                name,
		OutputDataDir:       staged,
		PeerURLs:            []string{peerURL},
		InitialCluster:      name + "=" + peerURL,
		InitialClusterToken: token,
		SkipHashCheck:       true, // a live backend has no snapshot hash appended
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	})
	if err != nil {
		os.RemoveAll(staged)
		return Restored{}, fmt.Errorf("restoring %s as a new cluster: %w", dataDir, err)
	}
	backup, err := MoveAside(dataDir, keep, now)
	if err != nil {
		return Restored{}, err
	}
	if mounted {
		err = os.Rename(filepath.Join(staged, "member"), filepath.Join(dataDir, "member"))
	} else {
		err = os.Rename(staged, dataDir)
	}
	if err != nil {
		return Restored{}, fmt.Errorf("putting the restored data in place: %w", err)
	}
	// The data is in place; an empty staging folder left behind is skipped (skippedAtTop).
	_ = os.Remove(staged)
	return Restored{Backup: backup, Token: token}, nil
}
