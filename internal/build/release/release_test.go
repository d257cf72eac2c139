package release

import (
	"context"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

const (
	rhcosRef = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	extRef   = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func TestResolveFromOCILayout(t *testing.T) {
	dir := t.TempDir()
	releasetest.WritePayload(t, dir, "4.19.0", releasetest.ImageReferences(map[string]string{"rhel-coreos": rhcosRef, "rhel-coreos-extensions": extRef, "etcd": "x@sha256:3"}))
	got, err := Resolve(context.Background(), "oci:"+dir+":4.19.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.RHCOS != rhcosRef || got.Extensions != extRef || got.Version != "4.19.0" || !strings.HasPrefix(got.ReleaseDigest, "sha256:") {
		t.Fatalf("%+v", got)
	}
}

func TestResolveErrors(t *testing.T) {
	rows := []struct {
		name string
		refs []byte
		want string
	}{
		{"no image-references", nil, "not a release payload"},
		{"no extensions tag", releasetest.ImageReferences(map[string]string{"rhel-coreos": rhcosRef}), "no tag rhel-coreos-extensions"},
		{"tag by name", releasetest.ImageReferences(map[string]string{"rhel-coreos": "quay.io/x/rhcos:4.19", "rhel-coreos-extensions": extRef}), "not pinned by digest"},
		{"not JSON", []byte("{"), "image-references"},
	}
	for _, r := range rows {
		dir := t.TempDir()
		releasetest.WritePayload(t, dir, "t", r.refs)
		if _, err := Resolve(context.Background(), "oci:"+dir+":t", nil); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want %q", r.name, err, r.want)
		}
	}
	if _, err := Resolve(context.Background(), "oci:"+t.TempDir()+":missing", nil); err == nil {
		t.Error("a missing image resolved")
	}
}
