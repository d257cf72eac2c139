// Package release reads an OpenShift release payload with containers/image (no oc): its
// release-manifests/image-references names, by digest, the images a layer is built from, and
// its release-manifests/release-metadata the release's exact version (as oc adm release info
// reads it).
package release

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/containers/image/v5/types"
	imagev1 "github.com/openshift/api/image/v1"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
)

// Images are what a layer needs from a release.
type Images struct {
	Release       string `json:"release"`       // the payload as given
	ReleaseDigest string `json:"releaseDigest"` // its manifest digest
	RHCOS         string `json:"rhcos"`         // rhel-coreos, digest-pinned
	Extensions    string `json:"extensions"`    // rhel-coreos-extensions, digest-pinned
	Version       string `json:"version"`       // the exact release, from release-metadata ("4.19.7")
}

const (
	referencesFile = "release-manifests/image-references"
	metadataFile   = "release-manifests/release-metadata"
)

// Tags in image-references.
const (
	tagRHCOS      = "rhel-coreos"
	tagExtensions = "rhel-coreos-extensions"
)

// Resolve reads the payload named by ref (a transport reference such as docker://… or oci:…;
// a bare name means docker://) and returns the digest-pinned images of the layer.
func Resolve(ctx context.Context, ref string, sys *types.SystemContext) (Images, error) {
	r, err := imageread.ParseReference(ref)
	if err != nil {
		return Images{}, fmt.Errorf("release image %q: %w", ref, err)
	}
	img, err := imageread.Open(ctx, r, sys)
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %w", ref, err)
	}
	defer img.Close()
	files := map[string][]byte{}
	// The files are in the layers; later layers win, as in the image's filesystem.
	err = img.Walk(ctx, func(_ int, h *tar.Header, content io.Reader) error {
		name := strings.TrimPrefix(h.Name, "./")
		if (name != referencesFile && name != metadataFile) || h.Typeflag != tar.TypeReg {
			return nil
		}
		data, err := io.ReadAll(io.LimitReader(content, 16<<20))
		files[name] = data
		return err
	})
	refs := files[referencesFile]
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %w", ref, err)
	}
	if refs == nil {
		return Images{}, fmt.Errorf("release image %s: no %s: not a release payload", ref, referencesFile)
	}
	out, err := fromReferences(refs)
	if err != nil {
		return Images{}, fmt.Errorf("release image %s: %s: %w", ref, referencesFile, err)
	}
	if out.Version, err = version(files[metadataFile]); err != nil {
		return Images{}, fmt.Errorf("release image %s: %s: %w", ref, metadataFile, err)
	}
	out.Release, out.ReleaseDigest = ref, img.Digest
	return out, nil
}

// version reads the release's exact version from release-metadata; "" when the payload has no
// such file (the layer then records the definition's release).
func version(data []byte) (string, error) {
	if data == nil {
		return "", nil
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", err
	}
	if m.Version == "" || strings.ContainsAny(m.Version, " \t\n\"") {
		return "", fmt.Errorf("version %q is not a release version", m.Version)
	}
	return m.Version, nil
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
