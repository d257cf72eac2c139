//go:build integration

package buildlayer

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/labbase"
	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

// BenchmarkLabBuild: the lab default from an empty store (debootstrap of the base with its
// kernel, then the layer) pushed to an empty registry; an agent-only change rebuilt and pushed
// to the same registry; the bytes the layer adds, in all and beyond the packages (our files);
// and whether building the first inputs again gives the first digest.
func BenchmarkLabBuild(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for range b.N {
		dir := b.TempDir()
		o := Options{Layer: "lab", Source: repoRoot(b), Store: filepath.Join(dir, "store"), Commit: "bench", Version: "1.0",
			SkipTLSVerify: true, Push: "docker://" + releasetest.Registry(b) + "/tnf/layer:lab"}
		began := time.Now()
		store, err := imagebuild.OpenStore(o.Store)
		if err != nil {
			b.Fatal(err)
		}
		_, err = labbase.Build(ctx, store, labbase.Options{Created: created})
		imagebuild.CloseStore(store)
		if err != nil {
			b.Fatal(err)
		}
		baseSeconds := time.Since(began).Seconds()
		began = time.Now()
		first, err := Build(ctx, o, Output{})
		if err != nil {
			b.Fatal(err)
		}
		layerSeconds := time.Since(began).Seconds()

		o.Version = "1.1"
		began = time.Now()
		if _, err := Build(ctx, o, Output{}); err != nil {
			b.Fatal(err)
		}
		rebuildSeconds := time.Since(began).Seconds()

		o.Version = "1.0"
		o.Push = "oci:" + filepath.Join(dir, "oci") + ":lab"
		again, err := Build(ctx, o, Output{})
		if err != nil {
			b.Fatal(err)
		}
		reproducible := 0.0
		if again.Digest == first.Digest {
			reproducible = 1
		}
		b.ReportMetric(baseSeconds, "cold-base-s")
		b.ReportMetric(layerSeconds, "cold-layer-s")
		b.ReportMetric(baseSeconds+layerSeconds, "cold-total-s")
		b.ReportMetric(rebuildSeconds, "agent-rebuild+push-s")
		b.ReportMetric(float64(first.AddedBytes)/(1<<20), "added-MiB")
		ours := first.AddedLayers[len(first.AddedLayers)-2].Size + first.AddedLayers[len(first.AddedLayers)-1].Size // files, links
		b.ReportMetric(float64(ours)/(1<<20), "beyond-packages-MiB")
		b.ReportMetric(reproducible, "same-digest-again")
	}
}
