// Package labbase makes the lab default's base image: Debian 12 from debootstrap (systemd, a
// kernel for the QEMU boot tests) committed into the build store as localhost/tnf-lab-base.
package labbase

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/containers/storage"

	"github.com/tnf-layer/tnf-layer/internal/imagebuild"
)

// Name is the base image the lab layer definition builds on.
const Name = "localhost/tnf-lab-base:latest"

// DefaultPackages make the base bootable under QEMU with systemd.
var DefaultPackages = []string{"systemd-sysv", "udev", "kmod", "iproute2", "dbus", "linux-image-cloud-amd64"}

// Options tune the base.
type Options struct {
	Mirror   string   // Debian mirror (default http://deb.debian.org/debian)
	Packages []string // extra packages (default DefaultPackages)
	Created  time.Time
	Rebuild  bool // debootstrap again even when the store has the base
}

// Build debootstraps Debian 12 and commits it to store as Name; it returns the image's digest in
// the store. A base already in the store is kept unless o.Rebuild.
func Build(ctx context.Context, store storage.Store, o Options) (string, error) {
	if !o.Rebuild {
		if d, err := imagebuild.LocalDigest(store, Name); err == nil {
			return d, nil
		}
	}
	if o.Mirror == "" {
		o.Mirror = "http://deb.debian.org/debian"
	}
	if o.Packages == nil {
		o.Packages = DefaultPackages
	}
	dir, err := os.MkdirTemp("", "tnf-lab-rootfs-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	args := []string{"--variant=minbase"}
	if len(o.Packages) > 0 {
		args = append(args, "--include="+strings.Join(o.Packages, ","))
	}
	args = append(args, "bookworm", dir, o.Mirror)
	if out, err := exec.CommandContext(ctx, "debootstrap", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("debootstrap: %v\n%s", err, tail(out))
	}
	// Downloaded packages are not part of the image.
	debs, _ := filepath.Glob(filepath.Join(dir, "var/cache/apt/archives/*.deb"))
	for _, d := range debs {
		if err := os.Remove(d); err != nil {
			return "", err
		}
	}
	if _, err := imagebuild.ImportRootfs(ctx, store, dir, Name, o.Created); err != nil {
		return "", err
	}
	return imagebuild.LocalDigest(store, Name)
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}
