package buildlayer

import (
	"context"
	"fmt"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/build/verify"
)

// VerifySummary is what build-layer verify found.
type VerifySummary struct {
	Image    string            `json:"image"`
	Digest   string            `json:"digest"`
	Layer    string            `json:"layer"`
	Labels   map[string]string `json:"labels"`
	Layers   int               `json:"layers"`
	Findings []string          `json:"findings"`
}

// Verify reads image (every layer, each checked against its digest) and checks it against its
// layer definition: the one o names (--ocp/--layer), else the one its label names. version, when
// set, is the layer version the image must carry. Findings make the error.
func Verify(ctx context.Context, o Options, image, version string) (VerifySummary, error) {
	s := VerifySummary{Image: image, Findings: []string{}}
	ref, err := imageread.ParseReference(image)
	if err != nil {
		return s, fmt.Errorf("%s: %w", image, err)
	}
	// One read of the manifest and configuration serves the label and the walk.
	img, err := imageread.Open(ctx, ref, o.systemContext())
	if err != nil {
		return s, fmt.Errorf("%s: %w", image, err)
	}
	defer img.Close()
	s.Digest, s.Labels, s.Layers = img.Digest, img.Labels, len(img.Layers)
	if o.OCP == "" && o.Layer == "" {
		o.Layer = img.Labels[layerdef.LabelLayer]
		if o.Layer == "" {
			return s, fmt.Errorf("%s: no %s label: name the layer with --ocp or --layer", image, layerdef.LabelLayer)
		}
	}
	l, err := o.LoadLayer()
	if err != nil {
		return s, err
	}
	s.Layer = l.Name
	check := verify.New(l)
	if err := img.Walk(ctx, check.Entry); err != nil {
		return s, fmt.Errorf("%s: %w", image, err)
	}
	if f := check.Finish(img.Image, version); len(f) > 0 {
		s.Findings = f
		return s, &FindingsError{Image: image, Layer: l.Name, Count: len(f)}
	}
	return s, nil
}

// FindingsError is a verify that read the whole image and found problems in it, told apart from
// an image that could not be read (a registry down, a bad reference): CI retries the one and
// fails the build on the other.
type FindingsError struct {
	Image, Layer string
	Count        int
}

func (e *FindingsError) Error() string {
	return fmt.Sprintf("%s: %d problem(s) with layer %s", e.Image, e.Count, e.Layer)
}
