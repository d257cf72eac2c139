package buildlayer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	return sys
}

// resolveBase fills the base and the extensions image of an rhcos layer from its release
// payload, unless both were given. A release named by digest is read once and cached; one
// named by tag is read every time (the tag may move) and the cache updated.
func resolveBase(ctx context.Context, o *Options, l layerdef.Layer) (*release.Images, error) {
	if l.Kind != "rhcos" || (o.Base != "" && o.Extensions != "") {
		return nil, nil
	}
	ref := o.ReleaseImage
	if ref == "" {
		ref = l.Release.Image
	}
	cache := ""
	if o.CacheDir != "" {
		cache = filepath.Join(o.CacheDir, "releases", fmt.Sprintf("%x.json", sha256.Sum256([]byte(ref))))
	}
	var imgs release.Images
	// An entry without the version was cached before the version was read: read it again.
	if data, err := os.ReadFile(cache); err == nil && strings.Contains(ref, "@sha256:") && json.Unmarshal(data, &imgs) == nil && imgs.Version != "" {
		return fill(o, imgs), nil
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
	return fill(o, imgs), nil
}

func fill(o *Options, imgs release.Images) *release.Images {
	if o.Base == "" {
		o.Base = imgs.RHCOS
	}
	if o.Extensions == "" {
		o.Extensions = imgs.Extensions
	}
	o.Release = imgs.Version
	return &imgs
}
