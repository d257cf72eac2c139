// Package imagebuild builds and pushes images in-process: buildah's library for the build (overlay
// or vfs storage, chroot isolation: it works as root on a plain machine), containers/image for the push.
// A program using it must call buildah.InitReexec first thing in main (and tests in TestMain).
package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/containers/buildah"
	"github.com/containers/buildah/define"
	"github.com/containers/buildah/imagebuildah"
	"github.com/containers/image/v5/copy"
	"github.com/containers/image/v5/manifest"
	"github.com/containers/image/v5/signature"
	is "github.com/containers/image/v5/storage"
	"github.com/containers/image/v5/types"
	"github.com/containers/storage"
	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
)

// OpenStore opens (creating) an image store under root: overlay where the kernel and the file
// system allow it (a layer is a mount, so an agent-only rebuild takes seconds), else vfs (every
// layer a full copy). A store keeps the driver it was created with.
func OpenStore(root string) (storage.Store, error) {
	drivers := []string{"overlay", "vfs"}
	if _, err := os.Stat(filepath.Join(root, "graph", "vfs-images")); err == nil {
		drivers = []string{"vfs"}
	}
	var errs []error
	for _, driver := range drivers {
		s, err := storage.GetStore(storage.StoreOptions{
			GraphRoot: filepath.Join(root, "graph"), RunRoot: filepath.Join(root, "run"), GraphDriverName: driver,
		})
		if err == nil {
			return s, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", driver, err))
	}
	return nil, errors.Join(errs...)
}

// CloseStore releases a store opened by OpenStore: every layer unmounted, and the overlay
// driver's own private mount of its folder, which a build leaves behind, undone, so the store's
// folder can be removed.
func CloseStore(s storage.Store) {
	root := s.GraphRoot()
	s.Shutdown(true)
	if err := unix.Unmount(filepath.Join(root, "overlay"), unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		fmt.Fprintf(os.Stderr, "unmounting %s: %v\n", filepath.Join(root, "overlay"), err)
	}
}

// ImportRootfs commits a root filesystem directory as image name, with every timestamp set to
// created so the same tree gives the same image, and entrypoint (none when nil).
func ImportRootfs(ctx context.Context, store storage.Store, rootfs, name string, created time.Time, entrypoint []string) (string, error) {
	tarball, err := os.CreateTemp("", "rootfs-*.tar")
	if err != nil {
		return "", err
	}
	tarball.Close()
	defer os.Remove(tarball.Name())
	// tar keeps device nodes, owners and hard links exactly; the build context is not a tree
	// buildah's Add would copy faithfully.
	if _, err := command.Run(ctx, "tar", "-C", rootfs, "--numeric-owner", "--sort=name",
		"--mtime=@"+fmt.Sprint(created.Unix()), "-cf", tarball.Name(), "."); err != nil {
		return "", err
	}
	b, err := buildah.NewBuilder(ctx, store, buildah.BuilderOptions{FromImage: "scratch", Isolation: define.IsolationChroot, NetworkInterface: hostNetwork{}})
	if err != nil {
		return "", err
	}
	defer b.Delete()
	if err := b.Add("/", true, buildah.AddAndCopyOptions{}, tarball.Name()); err != nil {
		return "", fmt.Errorf("adding %s: %w", rootfs, err)
	}
	b.SetOS("linux")
	b.SetArchitecture(runtime.GOARCH)
	b.SetEntrypoint(entrypoint)
	ref, err := is.Transport.ParseStoreReference(store, name)
	if err != nil {
		return "", err
	}
	policy, err := policyFile()
	if err != nil {
		return "", err
	}
	defer os.Remove(policy)
	id, _, _, err := b.Commit(ctx, ref, buildah.CommitOptions{HistoryTimestamp: &created, SourceDateEpoch: &created,
		RewriteTimestamp: true, SignaturePolicyPath: policy})
	return id, err
}

// BuildOptions tune a build.
type BuildOptions struct {
	Output  string    // image name in the store
	Created time.Time // image and history timestamps, and the clamp for file times
	Sys     *types.SystemContext
	Log     io.Writer
}

// acceptDigests is the signature policy of the build: bases are pinned by digest, which already
// fixes their content, and build machines often have no /etc/containers/policy.json.
const acceptDigests = `{"default":[{"type":"insecureAcceptAnything"}]}`

// policyFile writes acceptDigests to a temporary file; the caller removes it.
func policyFile() (string, error) {
	f, err := os.CreateTemp("", "policy-*.json")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(acceptDigests)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// Build builds the Containerfile in contextDir.
func Build(ctx context.Context, store storage.Store, contextDir string, o BuildOptions) (string, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	policy, err := policyFile()
	if err != nil {
		return "", err
	}
	defer os.Remove(policy)
	sys := types.SystemContext{}
	if o.Sys != nil {
		sys = *o.Sys
	}
	// Some of buildah's paths (tagging a fully cached build) read the policy from here.
	sys.SignaturePolicyPath = policy
	id, _, err := imagebuildah.BuildDockerfiles(ctx, store, define.BuildOptions{
		ContextDirectory:    contextDir,
		PullPolicy:          define.PullIfMissing,
		Isolation:           define.IsolationChroot,
		Output:              o.Output,
		OutputFormat:        define.OCIv1ImageManifest,
		Layers:              true,
		SourceDateEpoch:     &o.Created,
		RewriteTimestamp:    true,
		SystemContext:       &sys,
		SignaturePolicyPath: policy,
		CommonBuildOpts:     &define.CommonBuildOptions{Ulimit: currentLimits()},
		// RUN steps share the host's network: no CNI/netavark needed, and apt reaches its mirror.
		NamespaceOptions: define.NamespaceOptions{{Name: "network", Host: true}},
		NetworkInterface: hostNetwork{},
		Out:              log, Err: log, ReportWriter: log,
	}, filepath.Join(contextDir, "Containerfile"))
	return id, err
}

// Push copies image name from the store to dest (docker://, oci:, oci-archive:, dir:) and
// returns the pushed manifest's digest.
func Push(ctx context.Context, store storage.Store, name, dest string, sys *types.SystemContext, log io.Writer) (string, error) {
	src, err := is.Transport.ParseStoreReference(store, name)
	if err != nil {
		return "", err
	}
	for _, t := range []string{"oci:", "oci-archive:", "dir:"} {
		if p, ok := strings.CutPrefix(dest, t); ok {
			if i := strings.LastIndex(p, ":"); i > 0 && t != "dir:" {
				p = p[:i]
			}
			// A local destination's folder is created, like a registry's repository would be.
			if err := os.MkdirAll(filepath.Dir(filepath.Clean(p)), 0o755); err != nil {
				return "", err
			}
		}
	}
	dst, err := imageread.ParseReference(dest)
	if err != nil {
		return "", fmt.Errorf("--push %q: %w", dest, err)
	}
	raw, err := copyOwnImage(ctx, dst, src, sys, log)
	if err != nil {
		return "", fmt.Errorf("pushing to %s: %w", dest, err)
	}
	d, err := manifest.Digest(raw)
	return d.String(), err
}

// copyOwnImage copies one of our own images, read from our own store: no signature to check.
func copyOwnImage(ctx context.Context, dst, src types.ImageReference, sys *types.SystemContext, log io.Writer) ([]byte, error) {
	policy, err := signature.NewPolicyContext(&signature.Policy{Default: signature.PolicyRequirements{signature.NewPRInsecureAcceptAnything()}})
	if err != nil {
		return nil, err
	}
	defer policy.Destroy()
	return copy.Image(ctx, policy, dst, src, &copy.Options{DestinationCtx: sys, ReportWriter: log})
}

// CopyToNewStore makes an overlay store at graphRoot (which must not exist) holding images
// names from store, under the same names: a store a node's podman reads as an additional image
// store. Overlay because that is the driver podman uses on the nodes; a store's driver is fixed.
func CopyToNewStore(ctx context.Context, store storage.Store, names []string, graphRoot string) error {
	if _, err := os.Lstat(graphRoot); err == nil {
		return fmt.Errorf("%s exists", graphRoot)
	}
	runRoot, err := os.MkdirTemp("", "tnf-image-store-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(runRoot)
	dstStore, err := storage.GetStore(storage.StoreOptions{GraphRoot: graphRoot, RunRoot: runRoot, GraphDriverName: "overlay"})
	if err != nil {
		return fmt.Errorf("overlay store %s: %w", graphRoot, err)
	}
	defer CloseStore(dstStore)
	for _, name := range names {
		src, err := is.Transport.ParseStoreReference(store, name)
		if err != nil {
			return err
		}
		dst, err := is.Transport.ParseStoreReference(dstStore, name)
		if err != nil {
			return err
		}
		if _, err := copyOwnImage(ctx, dst, src, nil, io.Discard); err != nil {
			return fmt.Errorf("copying %s into %s: %w", name, graphRoot, err)
		}
	}
	return nil
}

// currentLimits are this process's own limits for RUN steps: buildah would otherwise raise the
// open-files and process limits to 1048576, which a machine that is itself a container refuses.
func currentLimits() []string {
	var out []string
	for name, res := range map[string]int{"nofile": unix.RLIMIT_NOFILE, "nproc": unix.RLIMIT_NPROC} {
		var l unix.Rlimit
		if err := unix.Getrlimit(res, &l); err == nil {
			out = append(out, fmt.Sprintf("%s=%d:%d", name, l.Cur, l.Max))
		}
	}
	sort.Strings(out)
	return out
}

// LocalDigest is the digest by which the store knows image name: what a Containerfile in the
// same store pins it by (a pushed copy has its own digest, of its compressed layers).
func LocalDigest(store storage.Store, name string) (string, error) {
	ref, err := is.Transport.ParseStoreReference(store, name)
	if err != nil {
		return "", err
	}
	//lint:ignore SA1019 the reference is a plain name, read once: the ID and repeated-call caveats do not apply
	img, err := is.Transport.GetStoreImage(store, ref)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return img.Digest.String(), nil
}

// LayerCount is the number of layers of image name in the store.
func LayerCount(ctx context.Context, store storage.Store, name string) (int, error) {
	ref, err := is.Transport.ParseStoreReference(store, name)
	if err != nil {
		return 0, err
	}
	img, err := imageread.Inspect(ctx, ref, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return len(img.Layers), nil
}
