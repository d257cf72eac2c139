// Package bootdisk turns a pushed OS layer image into what a QEMU guest boots: the image's
// filesystem unpacked layer by layer (whiteouts applied), a MachineConfig's Ignition files
// applied offline, a raw ext4 disk made from the tree without loop mounts, and the kernel and
// initrd the image carries in /boot.
package bootdisk

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/containers/image/v5/types"
	"github.com/containers/storage/pkg/archive"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
)

// Unpack writes ref's filesystem into dir (which should be empty), bottom layer first; each
// blob is checked against its digest. It returns the image's manifest digest.
func Unpack(ctx context.Context, ref types.ImageReference, sys *types.SystemContext, dir string) (string, error) {
	r, err := imageread.Open(ctx, ref, sys)
	if err != nil {
		return "", err
	}
	defer r.Close()
	for i := range r.Layers {
		err := r.ReadLayer(ctx, i, func(layer io.Reader) error {
			// containers/storage's applier: whiteouts and opaque directories as an image
			// store applies them, owners and modes as in the tar.
			_, err := archive.ApplyUncompressedLayer(dir, layer, &archive.TarOptions{})
			return err
		})
		if err != nil {
			return "", err
		}
	}
	return r.Digest, nil
}

// Boot is a kernel and its initrd.
type Boot struct{ Kernel, Initrd string }

// FindBoot returns the kernel in root's /boot with its initrd. An image with more than one
// kernel is refused: which one a machine boots would be a guess (their names do not sort by
// version: 6.1.0-9 sorts after 6.1.0-28).
func FindBoot(root string) (Boot, error) {
	kernels, _ := filepath.Glob(filepath.Join(root, "boot/vmlinuz-*"))
	switch len(kernels) {
	case 0:
		return Boot{}, fmt.Errorf("%s/boot: no vmlinuz-*: the image has no kernel", root)
	case 1:
	default:
		return Boot{}, fmt.Errorf("%s/boot: %d kernels (%s): the image should carry one", root, len(kernels), strings.Join(kernels, ", "))
	}
	k := kernels[0]
	version := strings.TrimPrefix(filepath.Base(k), "vmlinuz-")
	initrd := filepath.Join(root, "boot", "initrd.img-"+version)
	if _, err := os.Stat(initrd); err != nil {
		return Boot{}, fmt.Errorf("%s: the kernel's initrd is missing: %w", k, err)
	}
	return Boot{Kernel: k, Initrd: initrd}, nil
}

// MakeExt4 makes a raw disk of size bytes at out holding root's tree as its ext4 filesystem,
// labelled label: mke2fs copies the tree (-d), so nothing is mounted.
func MakeExt4(ctx context.Context, root, out string, size int64, label string) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_, err = command.Run(ctx, "mkfs.ext4", "-q", "-F", "-L", label, "-d", root, tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}
