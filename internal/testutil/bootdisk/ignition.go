package bootdisk

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	ign "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// ApplyIgnition writes an Ignition config's storage section (directories, files, links) under
// root, as Ignition's files stage would on first boot: the same contents, modes and owners
// (names looked up in root's /etc/passwd and /etc/group), parents made 0755 root:root.
// Contents must be data URLs: an offline apply fetches nothing. Anything else the config asks
// for (disks, users, units, kernel arguments) is an error, since it would be silently missing.
// source names the config in errors.
func ApplyIgnition(raw []byte, root, source string) error {
	cfg, rpt, err := ign.ParseCompatibleVersion(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if rpt.IsFatal() {
		return fmt.Errorf("%s: %s", source, rpt.String())
	}
	if err := unsupported(cfg); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	ids, err := readIDs(root)
	if err != nil {
		return err
	}
	st := cfg.Storage
	// Shallow paths first, so a directory's own mode is set before files land in it.
	sort.SliceStable(st.Directories, func(i, j int) bool { return depth(st.Directories[i].Path) < depth(st.Directories[j].Path) })
	for i, d := range st.Directories {
		field := fmt.Sprintf("storage.directories[%d]", i)
		if err := writeDirectory(root, d, ids); err != nil {
			return fmt.Errorf("%s: %s (%s): %w", source, field, d.Path, err)
		}
	}
	for i, f := range st.Files {
		field := fmt.Sprintf("storage.files[%d]", i)
		if err := writeFile(root, f, ids); err != nil {
			return fmt.Errorf("%s: %s (%s): %w", source, field, f.Path, err)
		}
	}
	for i, l := range st.Links {
		field := fmt.Sprintf("storage.links[%d]", i)
		if err := writeLink(root, l, ids); err != nil {
			return fmt.Errorf("%s: %s (%s): %w", source, field, l.Path, err)
		}
	}
	return nil
}

func unsupported(c types.Config) error {
	switch {
	case len(c.Storage.Disks) > 0 || len(c.Storage.Filesystems) > 0 || len(c.Storage.Raid) > 0 || len(c.Storage.Luks) > 0:
		return errors.New("storage: disks, filesystems, raid and luks are not applied offline")
	case len(c.Passwd.Users) > 0 || len(c.Passwd.Groups) > 0:
		return errors.New("passwd: users and groups are not applied offline")
	case len(c.Systemd.Units) > 0:
		return errors.New("systemd.units: units are not applied offline")
	case len(c.KernelArguments.ShouldExist) > 0 || len(c.KernelArguments.ShouldNotExist) > 0:
		return errors.New("kernelArguments: not applied offline")
	case c.Ignition.Config.Replace.Source != nil || len(c.Ignition.Config.Merge) > 0:
		return errors.New("ignition.config: merged or replaced configs are not fetched offline")
	}
	return nil
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// under is p inside root; Ignition paths are absolute and already validated as such.
func under(root, p string) string { return filepath.Join(root, filepath.Clean("/"+p)) }

func writeDirectory(root string, d types.Directory, ids idTables) error {
	uid, gid, err := ids.owner(d.Node)
	if err != nil {
		return err
	}
	dst := under(root, d.Path)
	if err := mkParents(root, dst); err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return setOwnerMode(dst, uid, gid, mode(d.Mode, 0o755))
}

func writeFile(root string, f types.File, ids idTables) error {
	if len(f.Append) > 0 {
		return errors.New("append: not applied offline")
	}
	uid, gid, err := ids.owner(f.Node)
	if err != nil {
		return err
	}
	dst := under(root, f.Path)
	_, statErr := os.Lstat(dst)
	exists := statErr == nil
	if f.Contents.Source == nil {
		if !exists {
			if err := mkParents(root, dst); err != nil {
				return err
			}
			if err := os.WriteFile(dst, nil, 0o600); err != nil {
				return err
			}
		}
		return setOwnerMode(dst, uid, gid, mode(f.Mode, 0o644))
	}
	if exists && (f.Overwrite == nil || !*f.Overwrite) {
		return errors.New("a file exists there and overwrite is not set")
	}
	data, err := contents(f.Contents)
	if err != nil {
		return fmt.Errorf("contents: %w", err)
	}
	if err := mkParents(root, dst); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(dst, data, mode(f.Mode, 0o644)); err != nil {
		return err
	}
	return setOwnerMode(dst, uid, gid, mode(f.Mode, 0o644))
}

func writeLink(root string, l types.Link, ids idTables) error {
	if l.Target == nil {
		return errors.New("target: missing")
	}
	uid, gid, err := ids.owner(l.Node)
	if err != nil {
		return err
	}
	dst := under(root, l.Path)
	if _, err := os.Lstat(dst); err == nil {
		if l.Overwrite == nil || !*l.Overwrite {
			return errors.New("a node exists there and overwrite is not set")
		}
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	if err := mkParents(root, dst); err != nil {
		return err
	}
	if l.Hard != nil && *l.Hard {
		return os.Link(under(root, *l.Target), dst)
	}
	if err := os.Symlink(*l.Target, dst); err != nil {
		return err
	}
	return os.Lchown(dst, uid, gid)
}

// contents decodes a data URL, checks its verification hash and decompresses it.
func contents(r types.Resource) ([]byte, error) {
	src := *r.Source
	if !strings.HasPrefix(src, "data:") {
		scheme, _, _ := strings.Cut(src, ":")
		return nil, fmt.Errorf("source: a %s: URL is not fetched offline (data: URLs only)", scheme)
	}
	du, err := dataurl.DecodeString(src)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	data := du.Data
	if h := r.Verification.Hash; h != nil {
		if err := verify(data, *h); err != nil {
			return nil, err
		}
	}
	if r.Compression != nil && *r.Compression != "" {
		if *r.Compression != "gzip" {
			return nil, fmt.Errorf("compression: %q is not supported (gzip only)", *r.Compression)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("compression: %w", err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("compression: %w", err)
		}
	}
	return data, nil
}

// verify checks "sha512-HEX" or "sha256-HEX" over the data as stored (before decompression), as
// Ignition does.
func verify(data []byte, want string) error {
	algo, sum, _ := strings.Cut(want, "-")
	var h hash.Hash
	switch algo {
	case "sha512":
		h = sha512.New()
	case "sha256":
		h = sha256.New()
	default:
		return fmt.Errorf("verification.hash: %q is not supported", algo)
	}
	h.Write(data)
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("verification.hash: content has %s-%s", algo, got)
	}
	return nil
}

func mode(m *int, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m) & os.ModePerm
}

// mkParents makes the missing directories between root and dst's parent, 0755 root:root.
func mkParents(root, dst string) error {
	var missing []string
	for d := filepath.Dir(dst); len(d) > len(root); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			return err
		}
		if err := setOwnerMode(missing[i], 0, 0, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func setOwnerMode(p string, uid, gid int, m os.FileMode) error {
	if err := os.Lchown(p, uid, gid); err != nil {
		return err
	}
	// Chmod, not the creation mode: the umask does not apply to Ignition's modes.
	return os.Chmod(p, m)
}

// idTables are the image's users and groups by name.
type idTables struct{ users, groups map[string]int }

func readIDs(root string) (idTables, error) {
	users, err := readIDFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		return idTables{}, err
	}
	groups, err := readIDFile(filepath.Join(root, "etc/group"))
	if err != nil {
		return idTables{}, err
	}
	return idTables{users, groups}, nil
}

// readIDFile reads name → id from the third field of /etc/passwd or /etc/group lines.
func readIDFile(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ids := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 {
			continue
		}
		if id, err := strconv.Atoi(fields[2]); err == nil {
			ids[fields[0]] = id
		}
	}
	return ids, sc.Err()
}

// owner resolves a node's user and group (root when unset).
func (t idTables) owner(n types.Node) (uid, gid int, err error) {
	uid, err = lookup(t.users, "user", n.User.ID, n.User.Name)
	if err != nil {
		return 0, 0, err
	}
	gid, err = lookup(t.groups, "group", n.Group.ID, n.Group.Name)
	return uid, gid, err
}

func lookup(table map[string]int, field string, id *int, name *string) (int, error) {
	switch {
	case id != nil:
		return *id, nil
	case name != nil && *name != "":
		v, ok := table[*name]
		if !ok {
			return 0, fmt.Errorf("%s.name: %q is not in the image", field, *name)
		}
		return v, nil
	}
	return 0, nil
}
