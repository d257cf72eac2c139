// Package releasetest writes image fixtures for tests as OCI layouts: a release payload (one
// layer holding release-manifests/image-references and release-metadata, the only parts of a
// payload build-layer reads) or an image of given layers; and runs a registry.
package releasetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/containers/image/v5/copy"
	"github.com/containers/image/v5/signature"
	"github.com/containers/image/v5/types"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
)

// ImageReferences is a release-manifests/image-references ImageStream with the given tags.
func ImageReferences(tags map[string]string) []byte {
	type tag struct {
		Name string            `json:"name"`
		From map[string]string `json:"from"`
	}
	var ts []tag
	for name, from := range tags {
		ts = append(ts, tag{Name: name, From: map[string]string{"kind": "DockerImage", "name": from}})
	}
	data, _ := json.Marshal(map[string]any{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]string{"name": "4.19.0"}, "spec": map[string]any{"tags": ts}})
	return data
}

// writeBlob stores data in an OCI layout's blobs and returns its descriptor.
func writeBlob(t testing.TB, dir, mediaType string, data []byte) map[string]any {
	sum := fmt.Sprintf("%x", sha256.Sum256(data))
	p := filepath.Join(dir, "blobs", "sha256", sum)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"mediaType": mediaType, "digest": "sha256:" + sum, "size": len(data)}
}

// WritePayload writes a release payload image as an OCI layout: one gzip layer with
// release-manifests/image-references, release-manifests/release-metadata naming tag as the
// release's version (as a payload's tag names it), and a decoy file, tagged tag. A nil refs
// leaves both release files out: not a payload. It is a fixture of the payload's format only,
// not of its other content.
func WritePayload(t testing.TB, dir, tag string, refs []byte) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	metadata, _ := json.Marshal(map[string]any{"kind": "cincinnati-metadata-v0", "version": tag, "previous": []string{}})
	for name, body := range map[string][]byte{"release-manifests/0000_00_decoy.yaml": []byte("kind: Decoy\n"),
		"release-manifests/image-references": refs, "release-manifests/release-metadata": metadata} {
		if refs == nil && name != "release-manifests/0000_00_decoy.yaml" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	WriteImage(t, dir, tag, layer.Bytes())
}

// WriteImage writes an amd64 image as an OCI layout tagged tag, one gzip layer per tar in
// layers (bottom first), and returns its manifest's digest.
func WriteImage(t testing.TB, dir, tag string, layers ...[]byte) string {
	var descs []any
	var diffIDs []string
	for _, tarball := range layers {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(tarball)
		zw.Close()
		descs = append(descs, writeBlob(t, dir, "application/vnd.oci.image.layer.v1.tar+gzip", gz.Bytes()))
		diffIDs = append(diffIDs, fmt.Sprintf("sha256:%x", sha256.Sum256(tarball)))
	}
	config, _ := json.Marshal(map[string]any{"architecture": "amd64", "os": "linux",
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs}})
	configDesc := writeBlob(t, dir, "application/vnd.oci.image.config.v1+json", config)
	man, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": configDesc, "layers": descs})
	manDesc := writeBlob(t, dir, "application/vnd.oci.image.manifest.v1+json", man)
	manDesc["annotations"] = map[string]string{"org.opencontainers.image.ref.name": tag}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{manDesc}})
	for name, data := range map[string][]byte{"index.json": index, "oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return manDesc["digest"].(string)
}

// Push copies the image src to dest (transport:reference, as build-layer names images), taking
// any signature and any certificate of dest's registry: a fixture into a test's registry.
func Push(t testing.TB, src, dest string) {
	t.Helper()
	srcRef, err := imageread.ParseReference(src)
	if err != nil {
		t.Fatal(err)
	}
	destRef, err := imageread.ParseReference(dest)
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
	if _, err := copy.Image(ctx, policy, destRef, srcRef, &copy.Options{DestinationCtx: &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue}}); err != nil {
		t.Fatalf("pushing %s to %s: %v", src, dest, err)
	}
}

// Registry runs Debian's docker-registry on a free loopback port until the test ends and
// returns its host:port.
func Registry(t testing.TB) string { return startRegistry(t, "") }

// ReadOnlyRegistry is a Registry in maintenance mode: it serves pulls and denies every push.
func ReadOnlyRegistry(t testing.TB) string {
	return startRegistry(t, ", maintenance: {readonly: {enabled: true}}")
}

func startRegistry(t testing.TB, storage string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	body := fmt.Sprintf("version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s}%s}\nhttp: {addr: %s}\n", filepath.Join(dir, "data"), storage, addr)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker-registry", "serve", cfg)
	if err := cmd.Start(); err != nil {
		t.Fatalf("docker-registry (Debian package docker-registry): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("docker-registry did not start")
	return ""
}
