// Package imageread reads images with containers/image: a reference with its transport, an
// image's manifest and configuration, and every entry of its layers, each blob checked against
// its digest. It links no image store: build-layer's release resolution, verify and build
// summary share it.
package imageread

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	_ "github.com/containers/image/v5/directory" // dir: references
	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/image"
	"github.com/containers/image/v5/manifest"
	_ "github.com/containers/image/v5/oci/archive" // oci-archive: references
	_ "github.com/containers/image/v5/oci/layout"  // oci: references
	"github.com/containers/image/v5/pkg/blobinfocache/none"
	"github.com/containers/image/v5/pkg/compression"
	"github.com/containers/image/v5/transports"
	"github.com/containers/image/v5/types"
	"github.com/opencontainers/go-digest"
)

// Image is what an image says about itself.
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

// ParseReference reads "transport:reference" (docker://, oci:, oci-archive:, dir:, and any
// other transport the program links, such as containers-storage:); a name without a known
// transport is a registry image. (alltransports would link the image store and its graph
// drivers into every program that reads an image.)
func ParseReference(name string) (types.ImageReference, error) {
	transport, rest, ok := strings.Cut(name, ":")
	t := transports.Get(transport)
	if !ok || t == nil {
		return docker.ParseReference("//" + name)
	}
	return t.ParseReference(rest)
}

// Reader is an open image.
type Reader struct {
	Image
	src types.ImageSource
}

// Open reads an image's manifest and configuration; the caller closes the Reader.
func Open(ctx context.Context, ref types.ImageReference, sys *types.SystemContext) (*Reader, error) {
	src, err := ref.NewImageSource(ctx, sys)
	if err != nil {
		return nil, err
	}
	img, err := inspect(ctx, src, sys)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &Reader{Image: img, src: src}, nil
}

// Close releases the image.
func (r *Reader) Close() error { return r.src.Close() }

// Inspect reads an image's manifest and configuration.
func Inspect(ctx context.Context, ref types.ImageReference, sys *types.SystemContext) (Image, error) {
	r, err := Open(ctx, ref, sys)
	if err != nil {
		return Image{}, err
	}
	defer r.Close()
	return r.Image, nil
}

func inspect(ctx context.Context, src types.ImageSource, sys *types.SystemContext) (Image, error) {
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
	d, err := manifest.Digest(raw)
	if err != nil {
		return Image{}, err
	}
	cfg, err := img.OCIConfig(ctx)
	if err != nil {
		return Image{}, err
	}
	out := Image{Digest: d.String(), Labels: cfg.Config.Labels, Env: cfg.Config.Env}
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

// EntryFunc sees one entry of layer number layer; r reads a regular file's content.
type EntryFunc func(layer int, hdr *tar.Header, r io.Reader) error

// Walk reads every layer, bottom first, checking each blob against its digest, and calls fn
// for each entry.
func (r *Reader) Walk(ctx context.Context, fn EntryFunc) error {
	for i := range r.Layers {
		err := r.ReadLayer(ctx, i, func(plain io.Reader) error {
			tr := tar.NewReader(plain)
			for {
				hdr, err := tr.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := fn(i, hdr, tr); err != nil {
					return err
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadLayer hands fn layer i as an uncompressed tar stream; the blob is checked against its
// digest once fn returns, and a mismatch is an error even if fn succeeded.
func (r *Reader) ReadLayer(ctx context.Context, i int, fn func(tarStream io.Reader) error) error {
	l := r.Layers[i]
	if err := r.readBlob(ctx, l, fn); err != nil {
		return fmt.Errorf("layer %d (%s): %w", i, l.Digest, err)
	}
	return nil
}

func (r *Reader) readBlob(ctx context.Context, l Layer, fn func(io.Reader) error) error {
	d, err := digest.Parse(l.Digest)
	if err != nil {
		return err
	}
	blob, _, err := r.src.GetBlob(ctx, types.BlobInfo{Digest: d, Size: l.Size}, none.NoCache)
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
	if err := fn(plain); err != nil {
		return err
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
