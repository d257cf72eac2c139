package buildlayer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containers/storage"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/build/containerfile"
	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

// preloadImages commits each of the layer's images from its root staged in the context into
// the build store, and puts the image store the layer ships into the context. That store is
// kept under the build store, named by the images' digests, and made only once: a store's own
// files (lock files, layer records, overlay's short link names) differ each time one is made,
// so making it again for the same images would change the layer's digest.
func preloadImages(ctx context.Context, store storage.Store, l layerdef.Layer, dir string) error {
	if len(l.Images) == 0 {
		return nil
	}
	key := sha256.New()
	names := make([]string, len(l.Images))
	for i, img := range l.Images {
		// The image runs its one binary, as the release's etcd image does (ENTRYPOINT
		// /usr/bin/etcd): the agent's podman runtime must work with such an image.
		entrypoint := []string{"/usr/bin/" + strings.TrimPrefix(img.Binary, "bin/")}
		if _, err := imagebuild.ImportRootfs(ctx, store, imageRoot(dir, i), img.Name, created, entrypoint); err != nil {
			return fmt.Errorf("images[%d] %s: %w", i, img.Name, err)
		}
		d, err := imagebuild.LocalDigest(store, img.Name)
		if err != nil {
			return err
		}
		fmt.Fprintf(key, "%s@%s\n", img.Name, d)
		names[i] = img.Name
	}
	kept := filepath.Join(filepath.Dir(store.GraphRoot()), "image-stores", hex.EncodeToString(key.Sum(nil)))
	if _, err := os.Stat(kept); os.IsNotExist(err) {
		tmp := kept + ".partial"
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(tmp), 0o700); err != nil {
			return err
		}
		if err := imagebuild.CopyToNewStore(ctx, store, names, tmp); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		if err := os.Rename(tmp, kept); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	// cp -a: the store holds overlay's symbolic links, which must stay links.
	_, err := command.Run(ctx, "cp", "-a", kept, filepath.Join(dir, containerfile.ImageStore))
	return err
}
