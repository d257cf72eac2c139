// Package labbase makes the lab default's base image: Debian 12 from debootstrap (systemd, a
// kernel for the QEMU boot tests) committed into the build store as localhost/tnf-lab-base.
// Like an RHCOS image it boots for the first time with an uninitialized machine ID (systemd
// then applies the presets, the layer's included) and without a host name of its own.
package labbase

import (
	"context"
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containers/storage"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
)

// Name is the base image the lab layer definition builds on.
const Name = "localhost/tnf-lab-base:latest"

// DefaultPackages make the base bootable under QEMU with systemd and reachable over SSH.
// (podman, which RHCOS has, comes with the lab layer's packages: debootstrap cannot resolve
// its dependencies.)
var DefaultPackages = []string{"systemd-sysv", "udev", "kmod", "iproute2", "dbus", "linux-image-cloud-amd64",
	"openssh-server"}

// rootfs holds the files the base adds to Debian: the cri-o and kubelet stand-in units (not
// enabled: on RHCOS the MachineConfig enables them), the power button module, and SSH host keys
// made at first start.
//
//go:embed rootfs
var rootfs embed.FS

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
	if _, err := command.Run(ctx, "debootstrap", args...); err != nil {
		return "", err
	}
	// Downloaded packages are not part of the image.
	debs, _ := filepath.Glob(filepath.Join(dir, "var/cache/apt/archives/*.deb"))
	for _, d := range debs {
		if err := os.Remove(d); err != nil {
			return "", err
		}
	}
	if err := firstBoot(dir); err != nil {
		return "", err
	}
	if _, err := imagebuild.ImportRootfs(ctx, store, dir, Name, o.Created, nil); err != nil {
		return "", err
	}
	return imagebuild.LocalDigest(store, Name)
}

// firstBoot adds the base's files and leaves the machine ID, host name and SSH host keys to the
// first boot.
func firstBoot(dir string) error {
	err := fs.WalkDir(rootfs, "rootfs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, strings.TrimPrefix(p, "rootfs"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := rootfs.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	// "uninitialized" is systemd's first-boot mark: a machine ID is made and presets are applied.
	if err := os.WriteFile(filepath.Join(dir, "etc/machine-id"), []byte("uninitialized\n"), 0o444); err != nil {
		return err
	}
	keys, _ := filepath.Glob(filepath.Join(dir, "etc/ssh/ssh_host_*"))
	for _, f := range append([]string{filepath.Join(dir, "var/lib/dbus/machine-id"), filepath.Join(dir, "etc/hostname")}, keys...) {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
