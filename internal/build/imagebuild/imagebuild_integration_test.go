//go:build integration

package imagebuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/containers/buildah"
)

func TestMain(m *testing.M) {
	if buildah.InitReexec() {
		return
	}
	os.Exit(m.Run())
}

// debootstrapped makes a minimal Debian 12 root filesystem (Debian's own debootstrap, from the
// apt mirror), once per test run.
func debootstrapped(t *testing.T) string {
	dir := filepath.Join(os.TempDir(), "tnf-imagebuild-rootfs")
	if _, err := os.Stat(filepath.Join(dir, "usr", "bin", "dpkg")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	out, err := exec.Command("debootstrap", "--variant=minbase", "bookworm", dir, "http://deb.debian.org/debian").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("debootstrap: %v\n%s", err, out)
	}
	return dir
}

// TestBuildIsReproducible imports a root filesystem as a base, builds a small layer on it
// (COPY with a mode, RUN under chroot isolation) in two fresh stores, and pushes both to OCI
// layouts: the digests are the same.
func TestBuildIsReproducible(t *testing.T) {
	rootfs := debootstrapped(t)
	ctxDir := t.TempDir()
	created := time.Unix(1700000000, 0).UTC()
	var digests []string
	for i := 0; i < 2; i++ {
		store, err := OpenStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := ImportRootfs(ctx, store, rootfs, "localhost/base:latest", created, nil); err != nil {
			t.Fatal(err)
		}
		baseDigest, err := LocalDigest(store, "localhost/base:latest")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctxDir, "hello"), []byte("#!/bin/sh\necho hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cf := "FROM localhost/base@" + baseDigest + "\nCOPY --chmod=0755 hello /usr/bin/hello\nRUN /usr/bin/hello > /usr/share/hello.txt\n"
		if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(cf), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Build(ctx, store, ctxDir, BuildOptions{Output: "localhost/layer:test", Created: created}); err != nil {
			t.Fatal(err)
		}
		d, err := Push(ctx, store, "localhost/layer:test", "oci:"+filepath.Join(t.TempDir(), "layer")+":test", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
		CloseStore(store)
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of the same inputs: %s and %s", digests[0], digests[1])
	}
}
