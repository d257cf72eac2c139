//go:build integration

package buildlayer

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/buildah"

	"github.com/tnf-layer/tnf-layer/internal/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/labbase"
	"github.com/tnf-layer/tnf-layer/internal/release/releasetest"
)

func TestMain(m *testing.M) {
	if buildah.InitReexec() {
		return
	}
	os.Exit(m.Run())
}

// TestLabBuild builds the lab default end to end, as the README's main job does: the Debian 12
// base from debootstrap (without the kernel, to keep the test short), the lab layer on it with
// buildah (apt from Debian's mirror, our agents), pushed to an OCI layout and to a real registry
// on loopback. Building again gives the same digest; the manifests name the pushed digest.
func TestLabBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	store, err := imagebuild.OpenStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := labbase.Build(ctx, store, labbase.Options{Packages: []string{}, Created: created}); err != nil {
		t.Fatal(err)
	}
	store.Shutdown(false)

	registry := releasetest.Registry(t)
	o := Options{Layer: "lab", Source: repoRoot(t), Store: storeDir, Commit: "test", SkipTLSVerify: true,
		Push: "docker://" + registry + "/tnf/layer:lab", EmitManifests: filepath.Join(dir, "manifests"),
		Cluster: tnfYAML(t, dir)}
	first, err := Build(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Pushed, "docker://"+registry+"/tnf/layer@sha256:") || first.Digest == "" {
		t.Fatalf("%+v", first)
	}
	o.Push = "oci:" + filepath.Join(dir, "oci") + ":lab"
	second, err := Build(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if second.Digest != first.Digest {
		t.Fatalf("the same inputs gave %s and %s", first.Digest, second.Digest)
	}
	mc, err := os.ReadFile(filepath.Join(dir, "manifests", "99-master-tnf-os-image.yaml"))
	if err != nil || !strings.Contains(string(mc), first.Digest) {
		t.Fatalf("osImageURL manifest: %v\n%s", err, mc)
	}
}
