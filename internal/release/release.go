// Package release reads an OpenShift release payload with containers/image (no oc): its
// release-manifests/image-references names, by digest, the images a layer is built from.
package release

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/image"
	"github.com/containers/image/v5/manifest"
	_ "github.com/containers/image/v5/oci/archive" // oci-archive: references
	_ "github.com/containers/image/v5/oci/layout"  // oci: references
	"github.com/containers/image/v5/pkg/blobinfocache/none"
	"github.com/containers/image/v5/transports"
	"github.com/containers/image/v5/types"
	imagev1 "github.com/openshift/api/image/v1"
)

// Images are what a layer needs from a release.
type Images struct {
	Release       string `json:"release"`       // the payload as given
	ReleaseDigest string `json:"releaseDigest"` // its manifest digest
	RHCOS         string `json:"rhcos"`         // rhel-coreos, digest-pinned
	Extensions    string `json:"extensions"`    // rhel-coreos-extensions, digest-pinned
}

const referencesFile = "release-manifests/image-references"

// Tags in image-references.
const (
	tagRHCOS      = "rhel-coreos"
	tagExtensions = "rhel-coreos-extensions"
)

// Resolve reads the payload named by ref (a transport reference such as docker://… or oci:…;
// a bare name means docker://) and returns the digest-pinned images of the layer.
func Resolve(ctx context.Context, ref string, sys *types.SystemContext) (Images, error) {
	r, err := parseReference(ref)
	if err != nil {
		return Images{}, fmt.Errorf("release image %q: %w", ref, err)
	}
	src, err := r.NewImageSource(ctx, sys)
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %w", ref, err)
	}
	defer src.Close()
	img, err := image.FromUnparsedImage(ctx, sys, image.UnparsedInstance(src, nil))
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %w", ref, err)
	}
	raw, _, err := img.Manifest(ctx)
	if err != nil {
		return Images{}, err
	}
	digest, err := manifest.Digest(raw)
	if err != nil {
		return Images{}, err
	}
	var refs []byte
	// The file is in one of the layers; later layers win, as in the image's filesystem.
	for _, l := range img.LayerInfos() {
		blob, _, err := src.GetBlob(ctx, l, none.NoCache)
		if err != nil {
			return Images{}, fmt.Errorf("release image %s: layer %s: %w", ref, l.Digest, err)
		}
		data, err := findInLayer(blob, referencesFile)
		blob.Close()
		if err != nil {
			return Images{}, fmt.Errorf("release image %s: layer %s: %w", ref, l.Digest, err)
		}
		if data != nil {
			refs = data
		}
	}
	if refs == nil {
		return Images{}, fmt.Errorf("release image %s: no %s: not a release payload", ref, referencesFile)
	}
	out, err := fromReferences(refs)
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %s: %w", ref, referencesFile, err)
	}
	out.Release, out.ReleaseDigest = ref, digest.String()
	return out, nil
}

// parseReference reads "transport:reference" for the transports a release can come from; a
// bare name is a registry reference. (alltransports would link containers-storage and its
// cgo graph drivers into every binary that reads a release.)
func parseReference(ref string) (types.ImageReference, error) {
	name, rest, ok := strings.Cut(ref, ":")
	t := transports.Get(name)
	if !ok || t == nil {
		return docker.ParseReference("//" + ref)
	}
	return t.ParseReference(rest)
}

// findInLayer returns the file at path in a (possibly gzip-compressed) layer tarball, or nil.
func findInLayer(blob io.Reader, path string) ([]byte, error) {
	br := newPeekReader(blob)
	var r io.Reader = br
	if br.gzipped() {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimPrefix(h.Name, "./") == path && h.Typeflag == tar.TypeReg {
			return io.ReadAll(io.LimitReader(tr, 16<<20))
		}
	}
}

// fromReferences picks the layer's images from image-references (an ImageStream).
func fromReferences(data []byte) (Images, error) {
	var is imagev1.ImageStream
	if err := json.Unmarshal(data, &is); err != nil {
		return Images{}, err
	}
	found := map[string]string{}
	for _, t := range is.Spec.Tags {
		if t.From != nil && (t.Name == tagRHCOS || t.Name == tagExtensions) {
			if !strings.Contains(t.From.Name, "@sha256:") {
				return Images{}, fmt.Errorf("tag %s: %q is not pinned by digest", t.Name, t.From.Name)
			}
			found[t.Name] = t.From.Name
		}
	}
	for _, tag := range []string{tagRHCOS, tagExtensions} {
		if found[tag] == "" {
			return Images{}, fmt.Errorf("no tag %s", tag)
		}
	}
	return Images{RHCOS: found[tagRHCOS], Extensions: found[tagExtensions]}, nil
}
