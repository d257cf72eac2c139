//go:build integration

package buildlayer

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containers/buildah"
	"github.com/containers/image/v5/types"
	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/labbase"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

func TestMain(m *testing.M) {
	if buildah.InitReexec() {
		return
	}
	os.Exit(m.Run())
}

// labBase is the lab base, debootstrapped without the kernel to keep the tests short (with
// systemd: the layer enables its units with systemctl), in a build store kept between runs in
// the user's cache: the debootstrap costs a minute and its inputs rarely change. The store's
// name holds a hash of those inputs (the labbase package, imagebuild that commits it, go.sum
// for the store's format, the options), so a change to any of them makes a new one. The tests build on copies of it.
var labBase struct {
	once sync.Once
	dir  string
	err  error
}

var labBaseOptions = labbase.Options{Packages: []string{"systemd"}, Created: created}

func cachedLabBase(ctx context.Context, root string) (string, error) {
	key, err := labBaseKey(root)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "tnf-layer", "test-stores", "lab-base-"+key)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", err
	}
	// make test runs this package's tests in two processes: one debootstraps, the other waits
	// for it and takes its store.
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	// Made beside its final name and renamed: an interrupted run leaves no half store there.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".lab-base-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	store, err := imagebuild.OpenStore(tmp)
	if err != nil {
		return "", err
	}
	_, err = labbase.Build(ctx, store, labBaseOptions)
	imagebuild.CloseStore(store)
	if err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, dir)
}

// labBaseKey hashes what the cached lab base is made from.
func labBaseKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%+v\n", labBaseOptions)
	for _, pkg := range []string{"labbase", "imagebuild"} {
		err := filepath.WalkDir(filepath.Join(root, "internal", "build", pkg), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(p, root), len(data))
			h.Write(data)
			return err
		})
		if err != nil {
			return "", err
		}
	}
	data, err := os.ReadFile(filepath.Join(root, "go.sum"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

// labStore is a build store of the test's own holding the lab base: a copy of labBase's. The
// tests that build run one after the other: two buildah builds side by side in one process lost
// a RUN step's output once in a loaded make test (the stand-in lint's message).
func labStore(t *testing.T, ctx context.Context) string {
	labBase.once.Do(func() { labBase.dir, labBase.err = cachedLabBase(ctx, repoRoot(t)) })
	if labBase.err != nil {
		t.Fatal(labBase.err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	if out, err := exec.CommandContext(ctx, "cp", "-a", labBase.dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the lab base's store: %v\n%s", err, out)
	}
	return dir
}

// TestLab builds the lab default end to end, as the README's main job does: the lab layer on a
// debootstrapped Debian 12 with buildah (apt from Debian's mirror, our agents), pushed to a real
// registry on loopback and to an OCI layout, verified, rebuilt after an agent-only change, and
// published by ci/build-layer.sh. The steps share one store, as a build machine's runs do.
func TestLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	storeDir := labStore(t, ctx)
	registry := releasetest.Registry(t)
	o := Options{Layer: "lab", Source: repoRoot(t), Store: storeDir, Commit: "test", Version: "1.0", SkipTLSVerify: true,
		Push: "docker://" + registry + "/tnf/layer:lab", EmitManifests: filepath.Join(dir, "manifests"),
		Cluster: tnfYAML(t, dir)}
	var progress bytes.Buffer
	first, err := Build(ctx, o, Output{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Pushed, "docker://"+registry+"/tnf/layer@sha256:") || first.Digest == "" {
		t.Fatalf("%+v", first)
	}
	for _, step := range []string{"resolve base", "render context", "preload images", "build", "push", "manifests"} {
		if !strings.Contains(progress.String(), "==> "+step+"\n") {
			t.Errorf("progress lacks step %q:\n%s", step, progress.String())
		}
	}
	// Four layers over the base: the packages, the preloaded images' store, our files, and the
	// links enabling our units.
	if len(first.AddedLayers) != 4 || !strings.Contains(first.AddedLayers[1].CreatedBy, "COPY") || !strings.Contains(first.AddedLayers[2].CreatedBy, "COPY") ||
		!strings.Contains(first.AddedLayers[3].CreatedBy, "systemctl enable") ||
		first.AddedBytes != first.AddedLayers[0].Size+first.AddedLayers[1].Size+first.AddedLayers[2].Size+first.AddedLayers[3].Size {
		t.Fatalf("added layers: %+v (%d bytes)", first.AddedLayers, first.AddedBytes)
	}
	mc, err := os.ReadFile(filepath.Join(dir, "manifests", "99-master-tnf-os-image.yaml"))
	if err != nil || !strings.Contains(string(mc), first.Digest) {
		t.Fatalf("osImageURL manifest: %v\n%s", err, mc)
	}

	t.Run("verify", func(t *testing.T) {
		s, err := Verify(ctx, Options{SkipTLSVerify: true}, first.Pushed, "1.0")
		if err != nil || s.Layer != "lab" || s.Digest != first.Digest {
			t.Fatalf("%v\n%+v", err, s)
		}
		s, err = Verify(ctx, Options{SkipTLSVerify: true}, first.Pushed, "2.0")
		if err == nil || len(s.Findings) != 1 || !strings.Contains(s.Findings[0], "io.tnf-layer.version") {
			t.Fatalf("another version: %v %q", err, s.Findings)
		}
		if _, err := Verify(ctx, Options{OCP: "4.19", SkipTLSVerify: true}, first.Pushed, ""); err == nil {
			t.Fatal("the lab image passed as the 4.19 layer")
		}
	})

	t.Run("the etcd image preloaded in the image store", func(t *testing.T) {
		img := openImage(t, ctx, first.Pushed, o.systemContext())
		store := strings.TrimPrefix(layerdef.ImageStore, "/") + "/"
		var named, binary bool
		err := img.Walk(ctx, func(layer int, hdr *tar.Header, r io.Reader) error {
			name := strings.TrimPrefix(hdr.Name, "./")
			if !strings.HasPrefix(name, store) {
				return nil
			}
			if layer != len(img.Layers)-3 {
				t.Errorf("%s in layer %d, not in the image store's own", name, layer)
			}
			switch {
			case name == store+"overlay-images/images.json":
				data, err := io.ReadAll(r)
				named = bytes.Contains(data, []byte(`"localhost/tnf/etcd:v3.5.21"`))
				return err
			case strings.HasPrefix(name, store+"overlay/") && strings.HasSuffix(name, "/diff/usr/bin/etcd"):
				binary = hdr.Mode&0o111 != 0 && hdr.Size > 1<<20
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !named || !binary {
			t.Fatalf("%s: image named %v, etcd binary in a layer %v", layerdef.ImageStore, named, binary)
		}
	})

	t.Run("no BMC password in any layer", func(t *testing.T) {
		img := openImage(t, ctx, first.Pushed, o.systemContext())
		err := img.Walk(ctx, func(layer int, hdr *tar.Header, r io.Reader) error {
			data, err := io.ReadAll(r)
			if bytes.Contains(data, []byte("secret-pw")) {
				t.Errorf("layer %d: %s holds a BMC password", layer, hdr.Name)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("same inputs, same digest, in an OCI layout", func(t *testing.T) {
		o := o
		o.Push = "oci:" + filepath.Join(dir, "oci") + ":lab"
		o.EmitManifests = ""
		second, err := Build(ctx, o, Output{})
		if err != nil {
			t.Fatal(err)
		}
		if second.Digest != first.Digest {
			t.Fatalf("the same inputs gave %s and %s", first.Digest, second.Digest)
		}
		if _, err := Verify(ctx, Options{}, o.Push, "1.0"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an agent-only change rebuilds only our layer", func(t *testing.T) {
		o := o
		o.Version = "1.1" // stamped into the agents
		o.EmitManifests = ""
		next, err := Build(ctx, o, Output{})
		if err != nil {
			t.Fatal(err)
		}
		if next.Digest == first.Digest || len(next.AddedLayers) != 4 || next.AddedLayers[0].Digest != first.AddedLayers[0].Digest ||
			next.AddedLayers[1].Digest != first.AddedLayers[1].Digest || next.AddedLayers[2].Digest == first.AddedLayers[2].Digest {
			t.Fatalf("before %+v\nafter %+v", first.AddedLayers, next.AddedLayers)
		}
	})

	bin := os.Getenv("TNF_BIN")
	script := func(t *testing.T, env ...string) (string, error) {
		if bin == "" {
			t.Skip("TNF_BIN is not set (make test sets it)")
		}
		cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "ci", "build-layer.sh"))
		cmd.Env = append(os.Environ(), append([]string{"BUILD_LAYER=" + filepath.Join(bin, "build-layer"), "STORE=" + storeDir,
			"MATRIX=lab", "TLS_VERIFY=false"}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("ci/build-layer.sh", func(t *testing.T) {
		artifacts := filepath.Join(dir, "artifacts")
		out, err := script(t, "REGISTRY="+registry+"/tnf/ci", "ARTIFACTS="+artifacts, "TNF_CLUSTER="+o.Cluster)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, f := range []string{"build.json", "verify.json", "manifests/99-master-tnf-os-image.yaml", "manifests/99-master-tnf-node-config.yaml",
			"manifests/secret-fencing-credentials-node1.yaml", "manifests/role-tnf-node-node1.yaml", "manifests/prometheusrule-tnf-layer.yaml"} {
			if _, err := os.Stat(filepath.Join(artifacts, "lab", f)); err != nil {
				t.Errorf("artifact %s: %v", f, err)
			}
		}
		if strings.Contains(out, "secret-pw") {
			t.Errorf("a BMC password in the job's output:\n%s", out)
		}
		// verify's exit code tells a layer with problems (2) from an image it could not read (1).
		var summary struct{ Pushed string }
		if data, err := os.ReadFile(filepath.Join(artifacts, "lab", "build.json")); err != nil || json.Unmarshal(data, &summary) != nil {
			t.Fatalf("build.json: %v", err)
		}
		for _, tc := range []struct {
			image, version string
			code           int
		}{{summary.Pushed, "not-this-version", 2}, {"docker://127.0.0.1:1/tnf/ci:lab", "", 1}} {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "build-layer"), "verify", "--tls-verify=false", "--layer-version", tc.version, tc.image)
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != tc.code {
				t.Errorf("verify %s: %v, want exit %d\n%s", tc.image, err, tc.code, out)
			}
		}
	})
	t.Run("ci/build-layer.sh names the failing step", func(t *testing.T) {
		out, err := script(t, "REGISTRY=127.0.0.1:1/tnf/ci", "ARTIFACTS="+filepath.Join(dir, "failed"))
		if err == nil || !strings.Contains(out, `FAILED in step "lab: build and push"`) {
			t.Fatalf("%v\n%s", err, out)
		}
	})

	for _, bad := range []struct{ name, push, want string }{
		{"unreachable registry", "docker://127.0.0.1:1/tnf/layer:lab", "127.0.0.1:1"},
		{"push denied", "docker://" + releasetest.ReadOnlyRegistry(t) + "/tnf/layer:lab", "push"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			o := o
			o.Push = bad.push
			o.EmitManifests = filepath.Join(dir, "manifests-"+strings.ReplaceAll(bad.name, " ", "-"))
			_, err := Build(ctx, o, Output{})
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Fatalf("error %v, want one with %q", err, bad.want)
			}
			if _, err := os.Stat(o.EmitManifests); !os.IsNotExist(err) {
				t.Errorf("%s was written", o.EmitManifests)
			}
		})
	}
}

// TestBuildChecksManifestInputsFirst: a bad node configuration fails before anything is built.
func TestBuildChecksManifestInputsFirst(t *testing.T) {
	dir := t.TempDir()
	o := Options{Layer: "lab", Source: repoRoot(t), Store: filepath.Join(dir, "store"), Commit: "test",
		Push: "oci:" + filepath.Join(dir, "oci") + ":lab", EmitManifests: filepath.Join(dir, "manifests"),
		Cluster: filepath.Join(dir, "missing.yaml")}
	var progress bytes.Buffer
	_, err := Build(context.Background(), o, Output{Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") || progress.Len() != 0 {
		t.Fatalf("error %v, progress %q", err, progress.String())
	}
}

// openImage opens a pushed image for reading; the test closes it.
func openImage(t *testing.T, ctx context.Context, name string, sys *types.SystemContext) *imageread.Reader {
	t.Helper()
	ref, err := imageread.ParseReference(name)
	if err != nil {
		t.Fatal(err)
	}
	img, err := imageread.Open(ctx, ref, sys)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}
