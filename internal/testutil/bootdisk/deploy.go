package bootdisk

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// NodeOwned are the top-level folders an image update keeps from the node as they are: /var,
// and what RHCOS keeps under /var (/root is /var/roothome there, /home is /var/home). The
// machine ID is in /etc, which the update merges.
var NodeOwned = []string{"var", "root", "home"}

// Deploy writes into out (which must not exist) the root file system a node has after an image
// update from oldImage to newImage, as rpm-ostree and bootc deploy one on RHCOS (which cannot
// run here): everything from newImage, except the node-owned folders, which are the node's, and
// /etc, three-way merged (MergeEtc). oldImage, newImage and node are root file systems; out's
// files from newImage are hard links to them (nothing in out is written in place).
func Deploy(oldImage, newImage, node, out string) error {
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(newImage)
	if err != nil {
		return err
	}
	skip := map[string]bool{"etc": true}
	for _, n := range NodeOwned {
		skip[n] = true
	}
	for _, e := range entries {
		if skip[e.Name()] {
			continue
		}
		if err := cp("-al", filepath.Join(newImage, e.Name()), filepath.Join(out, e.Name())); err != nil {
			return err
		}
	}
	for _, n := range NodeOwned {
		if _, err := os.Lstat(filepath.Join(node, n)); err == nil {
			if err := cp("-a", filepath.Join(node, n), filepath.Join(out, n)); err != nil {
				return err
			}
		}
	}
	return MergeEtc(filepath.Join(oldImage, "etc"), filepath.Join(node, "etc"), filepath.Join(newImage, "etc"), filepath.Join(out, "etc"))
}

// MergeEtc writes into out the /etc a node has after an update, as ostree merges it: the new
// image's /etc, then every path the node changed from the old image's /etc (added or modified:
// content, mode, owner, link target or type) taken from the node's, and every path the node
// deleted deleted. So the node's own configuration and machine ID stay, and files new in the
// image arrive (the links enabling the layer's units among them).
func MergeEtc(oldEtc, nodeEtc, newEtc, out string) error {
	if err := cp("-a", newEtc, out); err != nil {
		return err
	}
	old, err := walk(oldEtc)
	if err != nil {
		return err
	}
	node, err := walk(nodeEtc)
	if err != nil {
		return err
	}
	// Parents before children, so a changed folder is replaced before its files are looked at.
	var changed []string
	for p := range node {
		if !same(filepath.Join(oldEtc, p), old[p], filepath.Join(nodeEtc, p), node[p]) {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	for _, p := range changed {
		dst := filepath.Join(out, p)
		// A folder the new image has too keeps its contents, which merge one by one; anything
		// else is replaced by the node's.
		if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() || !node[p].IsDir() {
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if !node[p].IsDir() {
				if err := cp("-a", filepath.Join(nodeEtc, p), dst); err != nil {
					return err
				}
				continue
			}
			if err := os.Mkdir(dst, 0o755); err != nil {
				return err
			}
		}
		// The folder's own mode and owner are the node's.
		if err := os.Chmod(dst, node[p].Mode().Perm()); err != nil {
			return err
		}
		st := node[p].Sys().(*syscall.Stat_t)
		if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	var deleted []string
	for p := range old {
		if _, ok := node[p]; !ok {
			deleted = append(deleted, p)
		}
	}
	sort.Strings(deleted)
	for _, p := range deleted {
		if err := os.RemoveAll(filepath.Join(out, p)); err != nil {
			return err
		}
	}
	return nil
}

// walk lists a tree's paths (relative, without the root itself) with their Lstat.
func walk(root string) (map[string]fs.FileInfo, error) {
	paths := map[string]fs.FileInfo{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		paths[rel] = fi
		return nil
	})
	return paths, err
}

// same reports whether the node's path is the old image's unchanged.
func same(oldPath string, old fs.FileInfo, nodePath string, node fs.FileInfo) bool {
	if old == nil || old.Mode() != node.Mode() {
		return false
	}
	os1, ns := old.Sys().(*syscall.Stat_t), node.Sys().(*syscall.Stat_t)
	if os1.Uid != ns.Uid || os1.Gid != ns.Gid {
		return false
	}
	switch {
	case old.Mode()&fs.ModeSymlink != 0:
		a, err1 := os.Readlink(oldPath)
		b, err2 := os.Readlink(nodePath)
		return err1 == nil && err2 == nil && a == b
	case old.Mode().IsRegular():
		if old.Size() != node.Size() {
			return false
		}
		a, err1 := os.ReadFile(oldPath)
		b, err2 := os.ReadFile(nodePath)
		return err1 == nil && err2 == nil && bytes.Equal(a, b)
	}
	return true // folders (their contents are compared one by one) and special files
}

// cp copies with cp(1): -a keeps owners, modes, times, links, special files and extended
// attributes, which a copy in Go would each have to handle; -al hard-links files instead.
func cp(flags, src, dst string) error {
	_, err := command.Run(context.Background(), "cp", flags, "--no-target-directory", src, dst)
	return err
}
