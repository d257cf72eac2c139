package imagebuild

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/containers/image/v5/image"
	"github.com/containers/image/v5/pkg/blobinfocache/none"
	"github.com/containers/image/v5/pkg/compression"
	is "github.com/containers/image/v5/storage"
	"github.com/containers/image/v5/transports/alltransports"
	"github.com/containers/image/v5/types"
	"github.com/containers/storage"
	"github.com/opencontainers/go-digest"
)

// Image is what a pushed image says about itself.
type Image struct {
	Digest string // of its manifest
	Labels map[string]string
	Env    []string
	// History is every history entry's created_by, layer or not: a place where a build
	// argument (and with it a secret) would show.
	History []string
	Layers  []Layer // bottom first
}

// Layer is one layer blob and the build step that made it.
type Layer struct {
	Digest    string `json:"digest"`
	Size      int64  `json:"size"` // as stored (compressed)
	CreatedBy string `json:"createdBy,omitempty"`
}

// ParseReference reads an image name with its transport (docker://, oci:, oci-archive:, dir:);
// a name without one is a registry image.
func ParseReference(name string) (types.ImageReference, error) {
	if !strings.Contains(name, "://") && !strings.HasPrefix(name, "oci:") && !strings.HasPrefix(name, "oci-archive:") &&
		!strings.HasPrefix(name, "dir:") && !strings.HasPrefix(name, "containers-storage:") {
		name = "docker://" + name
	}
	return alltransports.ParseImageName(name)
}

// Inspect reads an image's manifest and configuration.
func Inspect(ctx context.Context, ref types.ImageReference, sys *types.SystemContext) (Image, error) {
	src, err := ref.NewImageSource(ctx, sys)
	if err != nil {
		return Image{}, err
	}
	defer src.Close()
	return inspectSource(ctx, src, sys)
}

func inspectSource(ctx context.Context, src types.ImageSource, sys *types.SystemContext) (Image, error) {
	// FromSource checks the manifest against a digest in the reference and picks this
	// machine's instance from a manifest list.
	img, err := image.FromSource(ctx, sys, src)
	if err != nil {
		return Image{}, err
	}
	defer img.Close()
	raw, _, err := img.Manifest(ctx)
	if err != nil {
		return Image{}, err
	}
	cfg, err := img.OCIConfig(ctx)
	if err != nil {
		return Image{}, err
	}
	out := Image{Digest: digest.FromBytes(raw).String(), Labels: cfg.Config.Labels, Env: cfg.Config.Env}
	var steps []string
	for _, h := range cfg.History {
		out.History = append(out.History, h.CreatedBy)
		if !h.EmptyLayer {
			steps = append(steps, h.CreatedBy)
		}
	}
	infos := img.LayerInfos()
	for i, l := range infos {
		layer := Layer{Digest: l.Digest.String(), Size: l.Size}
		// History entries match layers only when they number the same.
		if len(steps) == len(infos) {
			layer.CreatedBy = steps[i]
		}
		out.Layers = append(out.Layers, layer)
	}
	return out, nil
}

// LayerCount is the number of layers of image name in the store.
func LayerCount(ctx context.Context, store storage.Store, name string) (int, error) {
	ref, err := is.Transport.ParseStoreReference(store, name)
	if err != nil {
		return 0, err
	}
	img, err := Inspect(ctx, ref, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return len(img.Layers), nil
}

// EntryFunc sees one entry of layer number layer; r reads a regular file's content.
type EntryFunc func(layer int, hdr *tar.Header, r io.Reader) error

// WalkLayers reads every layer of the image, bottom first, checking each blob against its
// digest, and calls fn for each entry.
func WalkLayers(ctx context.Context, ref types.ImageReference, sys *types.SystemContext, fn EntryFunc) (Image, error) {
	src, err := ref.NewImageSource(ctx, sys)
	if err != nil {
		return Image{}, err
	}
	defer src.Close()
	img, err := inspectSource(ctx, src, sys)
	if err != nil {
		return Image{}, err
	}
	for i, l := range img.Layers {
		if err := walkBlob(ctx, src, i, l, fn); err != nil {
			return img, fmt.Errorf("layer %d (%s): %w", i, l.Digest, err)
		}
	}
	return img, nil
}

func walkBlob(ctx context.Context, src types.ImageSource, i int, l Layer, fn EntryFunc) error {
	d, err := digest.Parse(l.Digest)
	if err != nil {
		return err
	}
	blob, _, err := src.GetBlob(ctx, types.BlobInfo{Digest: d, Size: l.Size}, none.NoCache)
	if err != nil {
		return err
	}
	defer blob.Close()
	verifier := d.Verifier()
	checked := io.TeeReader(blob, verifier)
	plain, _, err := compression.AutoDecompress(checked)
	if err != nil {
		return err
	}
	defer plain.Close()
	tr := tar.NewReader(plain)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := fn(i, hdr, tr); err != nil {
			return err
		}
	}
	// The rest of the blob (tar padding) must pass through the verifier too.
	if _, err := io.Copy(io.Discard, checked); err != nil {
		return err
	}
	if !verifier.Verified() {
		return fmt.Errorf("content does not match its digest")
	}
	return nil
}
