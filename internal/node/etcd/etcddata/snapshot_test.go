package etcddata

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotIs: a file is the snapshot checked when the SHA-256 at its end is the one checked.
func TestSnapshotIs(t *testing.T) {
	dir := t.TempDir()
	content := []byte("a database's pages")
	sum := sha256.Sum256(content)
	path := filepath.Join(dir, "snapshot.db")
	if err := os.WriteFile(path, append(content, sum[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.db")
	if err := os.WriteFile(short, []byte("cut"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, sum, says string
	}{
		{"the same file", path, hex.EncodeToString(sum[:]), ""},
		{"another hash", path, strings.Repeat("0", 64), "has changed since it was checked"},
		{"shorter than a hash", short, hex.EncodeToString(sum[:]), "cannot be read as a snapshot"},
		{"gone", filepath.Join(dir, "gone.db"), hex.EncodeToString(sum[:]), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SnapshotIs(tc.path, tc.sum)
			if (tc.says == "") != (got == "") || !strings.Contains(got, tc.says) {
				t.Fatalf("SnapshotIs = %q, want one saying %q", got, tc.says)
			}
		})
	}
}
