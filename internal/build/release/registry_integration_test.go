//go:build integration

package release

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/containers/image/v5/types"

	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

var insecure = &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue}

// TestResolveFromRegistry pushes the payload fixture to a real registry on loopback and resolves
// it from there, as build-layer --ocp does with a real release.
func TestResolveFromRegistry(t *testing.T) {
	addr := releasetest.Registry(t)
	dir := t.TempDir()
	releasetest.WritePayload(t, dir, "4.19.0", releasetest.ImageReferences(map[string]string{"rhel-coreos": rhcosRef, "rhel-coreos-extensions": extRef}))
	releasetest.Push(t, "oci:"+dir+":4.19.0", "docker://"+addr+"/openshift-release-dev/ocp-release:4.19.0-x86_64")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := Resolve(ctx, addr+"/openshift-release-dev/ocp-release:4.19.0-x86_64", insecure)
	if err != nil {
		t.Fatal(err)
	}
	if got.RHCOS != rhcosRef || got.Extensions != extRef {
		t.Fatalf("%+v", got)
	}
	if _, err := Resolve(ctx, addr+"/openshift-release-dev/ocp-release:4.99.0", insecure); err == nil || !strings.Contains(err.Error(), "4.99.0") {
		t.Fatalf("missing tag: %v", err)
	}
	// Nothing listens here: refused at once, named in the error.
	if _, err := Resolve(ctx, "127.0.0.1:1/ocp-release:4.19.0", insecure); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable registry: %v", err)
	}
}
