//go:build integration

package release

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/containers/image/v5/copy"
	"github.com/containers/image/v5/signature"
	"github.com/containers/image/v5/types"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

var insecure = &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue}

// TestResolveFromRegistry pushes the payload fixture to a real registry on loopback and resolves
// it from there, as build-layer --ocp does with a real release.
func TestResolveFromRegistry(t *testing.T) {
	addr := releasetest.Registry(t)
	dir := t.TempDir()
	releasetest.WritePayload(t, dir, "4.19.0", releasetest.ImageReferences(map[string]string{"rhel-coreos": rhcosRef, "rhel-coreos-extensions": extRef}))
	src, err := imageread.ParseReference("oci:" + dir + ":4.19.0")
	if err != nil {
		t.Fatal(err)
	}
	dest, err := imageread.ParseReference("docker://" + addr + "/openshift-release-dev/ocp-release:4.19.0-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := signature.NewPolicyContext(&signature.Policy{Default: signature.PolicyRequirements{signature.NewPRInsecureAcceptAnything()}})
	if err != nil {
		t.Fatal(err)
	}
	defer policy.Destroy()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := copy.Image(ctx, policy, dest, src, &copy.Options{DestinationCtx: insecure}); err != nil {
		t.Fatal(err)
	}
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
