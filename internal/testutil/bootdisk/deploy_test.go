package bootdisk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path → content; "->target" makes a symbolic link, a trailing / a folder).
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(dst, 0o755)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), dst)
		default:
			err = os.WriteFile(dst, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeploy: an update from an old image to a new one on a node that changed its /etc and
// holds state in /var and /root, as ostree merges it.
func TestDeploy(t *testing.T) {
	dir := t.TempDir()
	old, img, node, out := filepath.Join(dir, "old"), filepath.Join(dir, "new"), filepath.Join(dir, "node"), filepath.Join(dir, "out")
	tree(t, old, map[string]string{
		"usr/bin/agent": "v1", "etc/machine-id": "uninitialized\n", "etc/kept": "image\n", "etc/edited": "image\n",
		"etc/removed-here": "image\n", "etc/alternative": "->/usr/bin/a", "etc/mode": "image\n", "var/lib/image-default": "x",
		"etc/private/file": "image\n",
	})
	tree(t, img, map[string]string{
		"usr/bin/agent": "v2", "usr/bin/new-tool": "v2", "etc/machine-id": "uninitialized\n", "etc/kept": "image v2\n",
		"etc/edited": "image v2\n", "etc/removed-here": "image v2\n", "etc/alternative": "->/usr/bin/b", "etc/mode": "image\n",
		"etc/systemd/system/multi-user.target.wants/tnf-setup.service": "->/usr/lib/systemd/system/tnf-setup.service",
		"var/lib/image-default": "x", "root/.profile": "image", "etc/private/file": "image v2\n",
	})
	tree(t, node, map[string]string{
		"usr/bin/agent": "v1", "etc/machine-id": "4f1d…\n", "etc/kept": "image\n", "etc/edited": "node's\n",
		"etc/alternative": "->/usr/bin/a", "etc/mode": "image\n", "etc/tnf/cluster.yaml": "node's", "etc/tnf/secrets/": "",
		"var/lib/etcd/member": "data", "root/.ssh/authorized_keys": "key", "etc/private/file": "image\n",
	})
	for p, mode := range map[string]os.FileMode{"etc/mode": 0o600, "etc/private": 0o700} {
		if err := os.Chmod(filepath.Join(node, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := Deploy(old, img, node, out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"usr/bin/agent": "v2", "usr/bin/new-tool": "v2", // the new image's
		"etc/machine-id": "4f1d…\n", "etc/edited": "node's\n", "etc/tnf/cluster.yaml": "node's", // the node's changes
		"etc/kept":        "image v2\n", // unchanged by the node: the new image's
		"etc/alternative": "->/usr/bin/b",
		"etc/systemd/system/multi-user.target.wants/tnf-setup.service": "->/usr/lib/systemd/system/tnf-setup.service", // new in the image
		"var/lib/etcd/member": "data", "root/.ssh/authorized_keys": "key", // the node's, whole
	}
	for p, w := range want {
		dst := filepath.Join(out, p)
		var got string
		if target, ok := strings.CutPrefix(w, "->"); ok {
			l, err := os.Readlink(dst)
			if err != nil || l != target {
				t.Errorf("%s: link %q %v, want %q", p, l, err, target)
			}
			continue
		}
		b, err := os.ReadFile(dst)
		if got = string(b); err != nil || got != w {
			t.Errorf("%s: %q %v, want %q", p, got, err, w)
		}
	}
	for _, p := range []string{"etc/removed-here", "var/lib/image-default", "root/.profile"} {
		if _, err := os.Lstat(filepath.Join(out, p)); !os.IsNotExist(err) {
			t.Errorf("%s: present (%v), want absent", p, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "etc/mode")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("etc/mode: %v %v, want the node's 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(out, "etc/private")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("etc/private: %v %v, want the node's 0700", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(out, "etc/tnf/secrets")); err != nil || !fi.IsDir() {
		t.Errorf("etc/tnf/secrets: %v, want the node's folder", err)
	}
	if err := Deploy(old, img, node, out); err == nil {
		t.Error("deployed into an existing folder")
	}
}
