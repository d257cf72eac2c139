package buildlayer

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/labbase"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

// Step is one timed step of a build.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// BuildSummary is what a build and push produced.
type BuildSummary struct {
	Summary
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Pushed  string `json:"pushed"` // the destination, pinned by the pushed manifest's digest
	Digest  string `json:"digest"`
	// AddedBytes is the size the layer adds over its base, as pushed (compressed); AddedLayers
	// are those layers with the build step that made each.
	AddedBytes  int64             `json:"addedBytes"`
	AddedLayers []imageread.Layer `json:"addedLayers"`
	Steps       []Step            `json:"steps"`
}

// Output is where a build reports: Progress gets one line as each step starts and ends, Log
// gets buildah's and the push's own output (a terminal's worth of detail).
type Output struct {
	Progress io.Writer
	Log      io.Writer
}

// created is every timestamp in the image: the same inputs give the same digest.
var created = time.Unix(0, 0).UTC()

// timed runs step name, reports it to progress and records its time.
func timed(progress io.Writer, steps *[]Step, name string, f func() error) error {
	fmt.Fprintf(progress, "==> %s\n", name)
	began := time.Now()
	err := f()
	st := Step{Name: name, Seconds: time.Since(began).Seconds()}
	*steps = append(*steps, st)
	if err != nil {
		fmt.Fprintf(progress, "    %s failed after %.1f s\n", name, st.Seconds)
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(progress, "    %s: %.1f s\n", name, st.Seconds)
	return nil
}

// Build renders the context, builds it with buildah into the store under o.Store and pushes
// the result to o.Push; manifests go to o.EmitManifests when set.
func Build(ctx context.Context, o Options, out Output) (BuildSummary, error) {
	o.Defaults()
	if out.Progress == nil {
		out.Progress = io.Discard
	}
	s := BuildSummary{Version: o.Version, Commit: o.Commit}
	if o.Push == "" {
		return s, fmt.Errorf("--push: needed (docker://…, oci:…, oci-archive:… or dir:…)")
	}
	if err := o.CheckSource(); err != nil {
		return s, err
	}
	if o.Commit == "" {
		return s, fmt.Errorf("--commit: needed (--source %s is not a git repository)", o.Source)
	}
	l, err := o.LoadLayer()
	if err != nil {
		return s, err
	}
	dest, err := imageread.ParseReference(o.Push)
	if err != nil {
		return s, fmt.Errorf("--push %q: %w", o.Push, err)
	}
	if err := checkManifestInputs(o, l); err != nil {
		return s, err
	}
	store, err := imagebuild.OpenStore(o.Store)
	if err != nil {
		return s, fmt.Errorf("--store %s: %w", o.Store, err)
	}
	defer imagebuild.CloseStore(store)
	if err := timed(out.Progress, &s.Steps, "resolve base", func() error {
		rel, err := resolveBase(ctx, &o, l)
		s.Release = rel
		if err != nil {
			return err
		}
		if o.Base == "" {
			o.Base = l.Base
		}
		if o.Base != "" && !strings.Contains(o.Base, "@sha256:") {
			// A base in the local store (the lab base): pinned by the store's own digest.
			d, err := imagebuild.LocalDigest(store, o.Base)
			if err != nil {
				if o.Base == labbase.Name {
					return fmt.Errorf("%w (run build-layer lab-base first)", err)
				}
				return err
			}
			o.Base = withDigest(o.Base, d)
		}
		return nil
	}); err != nil {
		return s, err
	}
	dir, err := os.MkdirTemp("", "tnf-layer-context-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(dir)
	if err := timed(out.Progress, &s.Steps, "render context", func() error { return renderContext(o, l, o.Base, dir) }); err != nil {
		return s, err
	}
	if len(l.Images) > 0 {
		if err := timed(out.Progress, &s.Steps, "preload images", func() error { return preloadImages(ctx, store, l, dir) }); err != nil {
			return s, err
		}
	}
	output := "localhost/tnf-layer/" + l.Name + ":build"
	if err := timed(out.Progress, &s.Steps, "build", func() error {
		_, err := imagebuild.Build(ctx, store, dir, imagebuild.BuildOptions{Output: output, Created: created, Sys: o.systemContext(), Log: out.Log})
		return err
	}); err != nil {
		return s, err
	}
	if err := timed(out.Progress, &s.Steps, "push", func() error {
		d, err := imagebuild.Push(ctx, store, output, o.Push, o.systemContext(), out.Log)
		s.Digest = d
		if err != nil {
			return err
		}
		// What the layer adds: the pushed image's layers above the base's.
		baseLayers, err := imagebuild.LayerCount(ctx, store, o.Base)
		if err != nil {
			return err
		}
		img, err := imageread.Inspect(ctx, dest, o.systemContext())
		if err != nil {
			return fmt.Errorf("reading back %s: %w", o.Push, err)
		}
		if baseLayers > len(img.Layers) {
			return fmt.Errorf("%s has fewer layers than its base", o.Push)
		}
		s.AddedLayers = img.Layers[baseLayers:]
		for _, l := range s.AddedLayers {
			s.AddedBytes += l.Size
		}
		return nil
	}); err != nil {
		return s, err
	}
	s.Layer, s.Base = l.Name, o.Base
	s.Pushed = pinned(o.Push, s.Digest)
	if o.EmitManifests != "" {
		if strings.HasPrefix(o.Push, "docker://") {
			o.LayerImage = strings.TrimPrefix(s.Pushed, "docker://")
		}
		err := timed(out.Progress, &s.Steps, "manifests", func() error {
			names, err := renderManifests(o, l, o.EmitManifests, o.EmitManifests)
			for _, n := range names {
				s.Manifests = append(s.Manifests, filepath.Join(o.EmitManifests, n))
			}
			return err
		})
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// checkManifestInputs renders the manifests the build will write into a scratch folder, with a
// stand-in digest, so that a bad --node-config or a missing --push-spec fails before the build.
func checkManifestInputs(o Options, l layerdef.Layer) error {
	if o.EmitManifests == "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "tnf-layer-manifests-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if ref, ok := strings.CutPrefix(o.Push, "docker://"); ok {
		o.LayerImage = withDigest(ref, "sha256:"+strings.Repeat("0", 64))
	}
	_, err = renderManifests(o, l, dir, o.EmitManifests)
	return err
}

// withDigest replaces an image name's tag (or digest) by digest.
func withDigest(name, digest string) string {
	if at := strings.Index(name, "@"); at >= 0 {
		name = name[:at]
	}
	if colon := strings.LastIndex(name, ":"); colon > strings.LastIndex(name, "/") {
		name = name[:colon]
	}
	return name + "@" + digest
}

// pinned is the pushed destination pinned by digest (docker://); other transports keep their
// reference and note the digest.
func pinned(dest, digest string) string {
	if ref, ok := strings.CutPrefix(dest, "docker://"); ok {
		return "docker://" + withDigest(ref, digest)
	}
	return dest + " (" + digest + ")"
}
