package etcddata

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// Snapshot is what an etcd snapshot file holds, as read without any etcd running.
type Snapshot struct {
	Path   string
	Size   int64
	SHA256 string // of the database, as the file's last 32 bytes record it (hex)
	// Revision is the keyspace's revision when the snapshot was taken.
	Revision int64
	// Members is the etcd membership the snapshot's cluster had.
	Members []SnapshotMember
}

// SnapshotMember is one member of a snapshot's cluster.
type SnapshotMember struct {
	ID       uint64
	Name     string
	PeerURLs []string
	Learner  bool
}

// ErrNotASnapshot is the refusal of a file that is not a whole snapshot as etcdctl snapshot save
// writes it: no integrity hash at its end (truncated, or a member's database copied by hand), a
// hash that does not match (truncated or altered), or no etcd keyspace in it.
var ErrNotASnapshot = errors.New("not a whole etcd snapshot")

// ReadSnapshot checks the snapshot file at path and reads it. etcdctl snapshot save (and the
// cluster-etcd-operator's cluster-backup.sh, which runs it) appends the SHA-256 of the database,
// whose size is a multiple of bbolt's pages: a file cut anywhere else has no hash to match, and
// one cut at a page has a hash of other bytes. Then the database's own consistency check, its
// revision and its membership. Nothing is written.
func ReadSnapshot(path string) (Snapshot, error) {
	s := Snapshot{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return s, err
	}
	s.Size = info.Size()
	// etcdutl's own test for a hash (snapshot.hasChecksum): the database is pages of a multiple
	// of 512 bytes.
	if s.Size%512 != sha256.Size {
		return s, fmt.Errorf("%s (%d bytes) has no integrity hash at its end (truncated, or a database copied by hand: "+
			"take one with etcdctl snapshot save): %w", path, s.Size, ErrNotASnapshot)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, s.Size-sha256.Size)); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	want, err := appendedHash(f, s.Size)
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return s, fmt.Errorf("%s: its integrity hash does not match its contents (truncated or altered): %w", path, ErrNotASnapshot)
	}
	s.SHA256 = hex.EncodeToString(want)
	if err := s.readDatabase(); err != nil {
		return s, err
	}
	if len(s.Members) == 0 {
		return s, fmt.Errorf("%s holds no etcd keyspace or membership: %w", path, ErrNotASnapshot)
	}
	return s, nil
}

// appendedHash is the SHA-256 at the end of a snapshot file of size bytes.
func appendedHash(f *os.File, size int64) ([]byte, error) {
	sum := make([]byte, sha256.Size)
	_, err := f.ReadAt(sum, size-sha256.Size)
	return sum, err
}

// SnapshotIs says why the file at path is not the snapshot whose SHA-256 (hex) is sum, as
// ReadSnapshot read it ("" when it is): the hash at its end is another. etcdutl's restore checks
// the content against that hash as it copies it, so the two together restore exactly the
// snapshot checked.
func SnapshotIs(path, sum string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() < sha256.Size {
		return fmt.Sprintf("%s cannot be read as a snapshot (%v)", path, err)
	}
	got, err := appendedHash(f, info.Size())
	switch {
	case err != nil:
		return err.Error()
	case hex.EncodeToString(got) != sum:
		return fmt.Sprintf("%s has changed since it was checked: its SHA-256 is %s, not %s", path, hex.EncodeToString(got), sum)
	}
	return ""
}

// readDatabase runs bbolt's consistency check of every page (what etcdutl snapshot status
// checks first; the hash says the file is what etcd sent, not that etcd's database was sound)
// and reads the revision (the key bucket's last key) and the membership.
func (s *Snapshot) readDatabase() error {
	db, err := openReadOnly(s.Path)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrNotASnapshot)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var problems []error
		for err := range tx.Check() {
			problems = append(problems, err)
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s: the database's consistency check failed: %w: %w", s.Path, errors.Join(problems...), ErrNotASnapshot)
		}
		keys, members := tx.Bucket([]byte("key")), tx.Bucket([]byte("members"))
		if keys == nil || members == nil {
			return nil
		}
		if k, _ := keys.Cursor().Last(); len(k) >= 8 {
			s.Revision = int64(binary.BigEndian.Uint64(k[:8]))
		}
		return members.ForEach(func(k, v []byte) error {
			var m struct {
				Name      string   `json:"name"`
				PeerURLs  []string `json:"peerURLs"`
				IsLearner bool     `json:"isLearner"`
			}
			id, err := strconv.ParseUint(string(k), 16, 64)
			if err == nil {
				err = json.Unmarshal(v, &m)
			}
			if err != nil {
				return fmt.Errorf("%s: member %q: %w", s.Path, k, err)
			}
			s.Members = append(s.Members, SnapshotMember{ID: id, Name: m.Name, PeerURLs: m.PeerURLs, Learner: m.IsLearner})
			return nil
		})
	})
}

// openReadOnly opens a bbolt database (a snapshot, or a stopped member's backend) for reading.
func openReadOnly(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// SnapshotValues reads the newest value of each of keys in the snapshot's keyspace; a key that
// is not there, or was deleted last, is missing from the map. One pass over the keyspace, in
// revision order (the key bucket's order), for all of them.
func SnapshotValues(path string, keys ...string) (map[string][]byte, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	wanted := map[string]bool{}
	for _, k := range keys {
		wanted[k] = true
	}
	values := map[string][]byte{}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return fmt.Errorf("%s: no key bucket: %w", path, ErrNotASnapshot)
		}
		return b.ForEach(func(rev, v []byte) error {
			// Only the entries of the keys asked for are decoded: an mvccpb.KeyValue begins with its
			// key (field 1, bytes), and a gigabyte of values is not copied to find three.
			if key, ok := leadingKey(v); ok && !wanted[string(key)] {
				return nil
			}
			var kv mvccpb.KeyValue
			if err := kv.Unmarshal(v); err != nil {
				return fmt.Errorf("%s: the entry at revision key %x: %w", path, rev, err)
			}
			if !wanted[string(kv.Key)] {
				return nil
			}
			// A revision key of 17 bytes (main, '_', sub) is a put; 18, ending in 't', a deletion.
			if len(rev) == 18 && rev[17] == 't' {
				delete(values, string(kv.Key))
				return nil
			}
			values[string(kv.Key)] = bytes.Clone(kv.Value)
			return nil
		})
	})
	return values, err
}

// leadingKey is the key an encoded mvccpb.KeyValue begins with (tag 0x0a: field 1, length-
// delimited); ok is false for an encoding that does not begin so, which is then decoded whole.
func leadingKey(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != 0x0a {
		return nil, false
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, false
	}
	return v[1+w : 1+w+int(n)], true
}

// BackendRevision is the newest revision in the data dir's backend (etcd must be stopped: a
// running etcd holds it, and the read gives up after a moment).
func BackendRevision(dataDir string) (int64, error) {
	db, err := openReadOnly(backendFile(dataDir))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var rev int64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return nil
		}
		// The key bucket is ordered by revision: main (8 bytes, big-endian), '_', sub.
		if k, _ := b.Cursor().Last(); len(k) >= 8 {
			rev = int64(binary.BigEndian.Uint64(k[:8]))
		}
		return nil
	})
	return rev, err
}
