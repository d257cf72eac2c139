package containerfile

import (
	"io/fs"
	"strings"
	"testing"

	tnflayer "github.com/tnf-layer/tnf-layer"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/testutil/golden"
)

const (
	baseDigest = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	extDigest  = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// TestGolden renders every shipped layer with fixed inputs and compares with testdata/.
func TestGolden(t *testing.T) {
	names, _ := fs.Glob(tnflayer.Layers, "layers/*.yaml")
	for _, n := range names {
		data, _ := fs.ReadFile(tnflayer.Layers, n)
		l, err := layerdef.Parse(n, data)
		if err != nil {
			t.Fatal(err)
		}
		in := Inputs{Base: baseDigest, Extensions: extDigest, PackageSource: l.Packages.Source, PackageCommand: l.Packages.Command, Packages: l.Packages.Names,
			Finalize: l.Finalize, Enable: l.Enable, Labels: l.Labels("1.0.0", "0123abc", ""), ImageStore: l.ImageStorePath()}
		got, err := Render(in)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, l.Name+".Containerfile", got)
	}
}

func TestRenderRejectsUnpinned(t *testing.T) {
	if _, err := Render(Inputs{Base: "quay.io/x/rhcos:latest"}); err == nil || !strings.Contains(err.Error(), "base") {
		t.Errorf("tag accepted: %v", err)
	}
	if _, err := Render(Inputs{Base: baseDigest, PackageSource: "rhcos-extensions", Extensions: "quay.io/x/ext:4.19"}); err == nil {
		t.Error("unpinned extensions accepted")
	}
	if _, err := Render(Inputs{Base: baseDigest, PackageSource: "apt"}); err == nil || !strings.Contains(err.Error(), "enable") {
		t.Errorf("a layer enabling nothing accepted: %v", err)
	}
}
