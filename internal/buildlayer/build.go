package buildlayer

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/labbase"
)

// Step is one timed step of a build.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// BuildSummary is what a build and push produced.
type BuildSummary struct {
	Summary
	Pushed string `json:"pushed"` // the destination, pinned by the pushed manifest's digest
	Digest string `json:"digest"`
	Steps  []Step `json:"steps"`
}

// created is every timestamp in the image: the same inputs give the same digest.
var created = time.Unix(0, 0).UTC()

func timed(steps *[]Step, name string, f func() error) error {
	began := time.Now()
	err := f()
	*steps = append(*steps, Step{Name: name, Seconds: time.Since(began).Seconds()})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Build renders the context, builds it with buildah into the store under o.Store and pushes
// the result to o.Push; manifests go to o.EmitManifests when set. log receives buildah's output.
func Build(ctx context.Context, o Options, log io.Writer) (BuildSummary, error) {
	o.Defaults()
	var s BuildSummary
	if o.Push == "" {
		return s, fmt.Errorf("--push: needed (docker://…, oci:…, oci-archive:… or dir:…)")
	}
	l, err := o.LoadLayer()
	if err != nil {
		return s, err
	}
	store, err := imagebuild.OpenStore(o.Store)
	if err != nil {
		return s, fmt.Errorf("--store %s: %w", o.Store, err)
	}
	defer store.Shutdown(false)
	if err := timed(&s.Steps, "resolve base", func() error {
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
	if err := timed(&s.Steps, "render context", func() error { return renderContext(o, l, o.Base, dir) }); err != nil {
		return s, err
	}
	output := "localhost/tnf-layer/" + l.Name + ":build"
	if err := timed(&s.Steps, "build", func() error {
		_, err := imagebuild.Build(ctx, store, dir, imagebuild.BuildOptions{Output: output, Created: created, Sys: o.systemContext(), Log: log})
		return err
	}); err != nil {
		return s, err
	}
	if err := timed(&s.Steps, "push", func() error {
		d, err := imagebuild.Push(ctx, store, output, o.Push, o.systemContext(), log)
		s.Digest = d
		return err
	}); err != nil {
		return s, err
	}
	s.Layer, s.Base = l.Name, o.Base
	s.Pushed = pinned(o.Push, s.Digest)
	if o.EmitManifests != "" {
		if strings.HasPrefix(o.Push, "docker://") {
			o.LayerImage = strings.TrimPrefix(s.Pushed, "docker://")
		}
		err := timed(&s.Steps, "manifests", func() error {
			names, err := renderManifests(o, l, o.EmitManifests)
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
