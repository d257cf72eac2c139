package bootdisk

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/oci/layout"

	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

// entry is one tar entry of a test layer: a directory (name ends in /), a symlink (link set)
// or a regular file.
type entry struct {
	name, body, link string
	mode             int64
	uid, gid         int
}

func layerTar(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case strings.HasSuffix(e.name, "/"):
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		case e.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUnpack: the upper layer's whiteout removes a file, its opaque directory hides the lower
// layer's contents, its file replaces the lower one; owners, modes and links are the tar's.
func TestUnpack(t *testing.T) {
	layoutDir := t.TempDir()
	manifest := releasetest.WriteImage(t, layoutDir, "lab",
		layerTar(t,
			entry{name: "etc/", mode: 0o755},
			entry{name: "etc/keep", body: "lower\n", mode: 0o644},
			entry{name: "etc/gone", body: "x\n", mode: 0o644},
			entry{name: "etc/alias", link: "keep", mode: 0o777},
			entry{name: "var/lib/pcsd/", mode: 0o750, uid: 106, gid: 111},
			entry{name: "var/lib/pcsd/old", body: "old\n", mode: 0o600, uid: 106, gid: 111},
		),
		layerTar(t,
			entry{name: "etc/keep", body: "upper\n", mode: 0o640},
			entry{name: "etc/.wh.gone", mode: 0o644},
			entry{name: "var/lib/pcsd/", mode: 0o750, uid: 106, gid: 111},
			entry{name: "var/lib/pcsd/.wh..wh..opq", mode: 0o644},
			entry{name: "var/lib/pcsd/new", body: "new\n", mode: 0o600, uid: 106, gid: 111},
		),
	)
	ref, err := layout.NewReference(layoutDir, "lab")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	digest, err := Unpack(context.Background(), ref, nil, root)
	if err != nil {
		t.Fatal(err)
	}
	if digest != manifest {
		t.Errorf("digest %s, want the manifest's %s", digest, manifest)
	}

	if b, err := os.ReadFile(filepath.Join(root, "etc/keep")); err != nil || string(b) != "upper\n" {
		t.Errorf("etc/keep: %q %v, want the upper layer's", b, err)
	}
	if mode, _, _ := owner(t, filepath.Join(root, "etc/keep")); mode != 0o640 {
		t.Errorf("etc/keep mode %o, want 640", mode)
	}
	if link, err := os.Readlink(filepath.Join(root, "etc/alias")); err != nil || link != "keep" {
		t.Errorf("etc/alias: %q %v, want a link to keep", link, err)
	}
	for _, gone := range []string{"etc/gone", "etc/.wh.gone", "var/lib/pcsd/old", "var/lib/pcsd/.wh..wh..opq"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want it absent", gone, err)
		}
	}
	for _, p := range []string{"var/lib/pcsd", "var/lib/pcsd/new"} {
		mode, uid, gid := owner(t, filepath.Join(root, p))
		if uid != 106 || gid != 111 {
			t.Errorf("%s: owner %d:%d, want 106:111", p, uid, gid)
		}
		if want := map[string]os.FileMode{"var/lib/pcsd": 0o750, "var/lib/pcsd/new": 0o600}[p]; mode != want {
			t.Errorf("%s: mode %o, want %o", p, mode, want)
		}
	}
}

func TestUnpackMissingImage(t *testing.T) {
	layoutDir := t.TempDir()
	releasetest.WriteImage(t, layoutDir, "lab", layerTar(t, entry{name: "etc/", mode: 0o755}))
	ref, err := layout.NewReference(layoutDir, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unpack(context.Background(), ref, nil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "other") {
		t.Fatalf("err %v, want one naming the missing tag", err)
	}
}

func writeFiles(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindBoot(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, "boot/vmlinuz-6.1.0-28-cloud-amd64", "boot/initrd.img-6.1.0-28-cloud-amd64", "boot/config-6.1.0-28-cloud-amd64")
	got, err := FindBoot(root)
	if err != nil {
		t.Fatal(err)
	}
	want := Boot{Kernel: filepath.Join(root, "boot/vmlinuz-6.1.0-28-cloud-amd64"), Initrd: filepath.Join(root, "boot/initrd.img-6.1.0-28-cloud-amd64")}
	if got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

func TestFindBootRefuses(t *testing.T) {
	rows := []struct {
		name  string
		files []string
		want  string
	}{
		{"no kernel", []string{"boot/initrd.img-6.1.0-28-cloud-amd64"}, "no vmlinuz-*"},
		{"no initrd", []string{"boot/vmlinuz-6.1.0-28-cloud-amd64", "boot/initrd.img-6.1.0-9-cloud-amd64"}, "initrd is missing"},
		{"two kernels", []string{"boot/vmlinuz-6.1.0-28-cloud-amd64", "boot/initrd.img-6.1.0-28-cloud-amd64",
			"boot/vmlinuz-6.1.0-9-cloud-amd64", "boot/initrd.img-6.1.0-9-cloud-amd64"}, "2 kernels"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, r.files...)
			if _, err := FindBoot(root); err == nil || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("err %v, want %q", err, r.want)
			}
		})
	}
}

// TestMakeExt4: the disk holds the tree (read back with debugfs, nothing mounted); a failed
// mkfs leaves no disk and no temporary file.
func TestMakeExt4(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, "etc/hostname")
	out := filepath.Join(t.TempDir(), "disk.raw")
	if err := MakeExt4(context.Background(), root, out, 64<<20, "root"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil || st.Size() != 64<<20 {
		t.Fatalf("%s: %v %v, want 64 MiB", out, st, err)
	}
	b, err := exec.Command("debugfs", "-R", "cat /etc/hostname", out).Output()
	if err != nil || string(b) != "etc/hostname" {
		t.Errorf("debugfs cat /etc/hostname: %q %v", b, err)
	}
	if b, err := exec.Command("e2label", out).Output(); err != nil || strings.TrimSpace(string(b)) != "root" {
		t.Errorf("e2label: %q %v, want root", b, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.raw")
	err = MakeExt4(context.Background(), filepath.Join(root, "missing"), bad, 64<<20, "root")
	if err == nil || !strings.Contains(err.Error(), "mkfs.ext4 ") || !strings.Contains(err.Error(), "-d "+filepath.Join(root, "missing")) {
		t.Fatalf("err %v, want mkfs.ext4's", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(bad), "*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
