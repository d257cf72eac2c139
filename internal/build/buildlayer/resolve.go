package buildlayer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/containers/image/v5/pkg/cli/environment"
	"github.com/containers/image/v5/types"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/build/release"
)

func (o Options) systemContext() *types.SystemContext {
	sys := &types.SystemContext{AuthFilePath: o.AuthFile}
	if o.SkipTLSVerify {
		sys.DockerInsecureSkipTLSVerify = types.OptionalBoolTrue
	}
	// A registries.conf of the build host's own choosing (a disconnected site's mirrors), as
	// podman, skopeo and buildah take it from CONTAINERS_REGISTRIES_CONF; it errs only on nil.
	_ = environment.UpdateRegistriesConf(sys)
	return sys
}

// exactRelease is a z-stream release, as the cluster version names it.
var exactRelease = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// resolveBase fills the base and the extensions image of an rhcos layer, and the exact release,
// from the release payload --release-image names, unless --base, --extensions and --release
// give all three. The exact release is never guessed: the image's release label and the alert
// that compares it with the cluster's version need it. A release named by digest is read once
// and cached; one named by tag is read every time (the tag may move) and the cache updated.
func resolveBase(ctx context.Context, o *Options, l layerdef.Layer) (*release.Images, error) {
	if l.Kind != "rhcos" {
		return nil, nil
	}
	if o.Release != "" && (!exactRelease.MatchString(o.Release) || !l.OfRelease(o.Release)) {
		return nil, fmt.Errorf("--release: %q is not a release of OpenShift %s (MAJOR.MINOR.PATCH, e.g. %s.7)", o.Release, l.Release.Version, l.Release.Version)
	}
	if o.Base != "" && o.Extensions != "" {
		if o.Release == "" {
			return nil, fmt.Errorf("--release: missing: with --base and --extensions no release payload is read, so give the exact release "+
				"they come from (e.g. --release %s.7): the image's %s label says it, and an alert compares it with the cluster's version", l.Release.Version, layerdef.LabelRelease)
		}
		return nil, nil
	}
	ref := o.ReleaseImage
	if ref == "" {
		return nil, fmt.Errorf("--release-image: missing: the release payload the cluster runs (oc get clusterversion version "+
			"-o jsonpath='{.status.desired.image}'), e.g. %s with the release's own z-stream; or --base, --extensions and --release "+
			"to build without reading a payload", l.Release.Image)
	}
	cache := ""
	if o.CacheDir != "" {
		cache = filepath.Join(o.CacheDir, "releases", fmt.Sprintf("%x.json", sha256.Sum256([]byte(ref))))
	}
	var imgs release.Images
	// An entry without the version was cached before the version was read: read it again.
	if data, err := os.ReadFile(cache); err == nil && strings.Contains(ref, "@sha256:") && json.Unmarshal(data, &imgs) == nil && imgs.Version != "" {
		return fill(o, imgs)
	}
	imgs, err := release.Resolve(ctx, ref, o.systemContext())
	if err != nil {
		return nil, err
	}
	if cache != "" {
		data, _ := json.MarshalIndent(imgs, "", "  ")
		if err := os.MkdirAll(filepath.Dir(cache), 0o755); err == nil {
			_ = fsutil.WriteFileAtomic(cache, data, 0o644) // a cache: failing to write it costs a re-read
		}
	}
	return fill(o, imgs)
}

// fill takes what the payload names; a --release it does not name is an error.
func fill(o *Options, imgs release.Images) (*release.Images, error) {
	if o.Release != "" && o.Release != imgs.Version {
		return nil, fmt.Errorf("--release: %s, but --release-image %s is release %s", o.Release, o.ReleaseImage, imgs.Version)
	}
	if o.Base == "" {
		o.Base = imgs.RHCOS
	}
	if o.Extensions == "" {
		o.Extensions = imgs.Extensions
	}
	o.Release = imgs.Version
	return &imgs, nil
}
