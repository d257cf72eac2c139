//go:build integration

package buildlayer

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/containers/image/v5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/build/containerfile"
	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

// The stand-in RHCOS build: nothing here reaches Red Hat's registries, so the RHCOS layers'
// package step runs against stand-ins (testdata/standin-rhcos, each file says it is one):
//   - rhel-coreos: a Debian 12 root with rpm and dnf from Debian, RHCOS 4.19's os-release, and
//     stand-ins of `bootc container lint` (fails on content under /usr/local and on /var content
//     without a tmpfiles.d entry), `rpm-ostree install` (dnf, plus rpm-ostree's tmpfiles entries
//     for a package's /var folders) and `ostree container commit`;
//   - rhel-coreos-extensions: an image whose /usr/share/rpm-ostree/extensions/ is an RPM
//     repository, made here with rpmbuild and createrepo_c, of stand-in packages of the HA stack
//     (marker commands, units, /var folders, documentation, pacemaker's /etc/pacemaker/authkey).

// standInPackage is one stand-in RPM (testdata/standin-rhcos/package.spec.tmpl).
type standInPackage struct {
	Name                            string
	Requires, Commands, Units, Keys []string
	VarDirs                         []string // with their parents, each owned
}

// standInPackages are the packages of the two-node-ha extension (pacemaker, pcs,
// fence-agents-all) and what they pull in, with the commands build-layer verify looks for.
var standInPackages = []standInPackage{
	{Name: "corosync", Commands: []string{"corosync", "corosync-cfgtool", "corosync-cmapctl"}, Units: []string{"corosync.service"},
		VarDirs: []string{"/var/lib/corosync", "/var/log/cluster"}},
	{Name: "pacemaker", Requires: []string{"corosync"}, Commands: []string{"pacemakerd", "crm_attribute", "cibadmin", "crm_mon"},
		Units: []string{"pacemaker.service"}, Keys: []string{"/etc/pacemaker/authkey"},
		VarDirs: []string{"/var/lib/pacemaker", "/var/lib/pacemaker/cib", "/var/log/pacemaker"}},
	{Name: "pcs", Requires: []string{"pacemaker"}, Commands: []string{"pcs"}},
	{Name: "fence-agents-all", Commands: []string{"fence_redfish"}},
}

// twoNodeHA is the package list of MCO's two-node-ha extension (machine-config-operator
// release-4.19, pkg/controller/common/helpers.go, SupportedExtensions).
var twoNodeHA = []string{"pacemaker", "pcs", "fence-agents-all"}

const standInDir = "testdata/standin-rhcos"

// standInRepository builds the stand-in RPMs and their repository into dir.
func standInRepository(t *testing.T, dir string) {
	spec := template.Must(template.ParseFiles(filepath.Join(standInDir, "package.spec.tmpl")))
	top := t.TempDir()
	for _, p := range standInPackages {
		file := filepath.Join(top, p.Name+".spec")
		var b bytes.Buffer
		if err := spec.Execute(&b, p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "rpmbuild", "-bb", "--nodeps", "--define", "_topdir "+top, "--define", "__os_install_post %{nil}",
			"--define", "_build_id_links none", file)
	}
	rpms, _ := filepath.Glob(filepath.Join(top, "RPMS", "noarch", "*.rpm"))
	if len(rpms) != len(standInPackages) {
		t.Fatalf("rpmbuild made %v", rpms)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range rpms {
		run(t, "cp", r, dir)
	}
	run(t, "createrepo_c", "--quiet", dir)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// buildAndPush builds the Containerfile in dir into the store and pushes it to the registry as
// name; it returns the pushed image by digest.
func buildAndPush(t *testing.T, ctx context.Context, storeDir, dir, registry, name string, sys *types.SystemContext) string {
	t.Helper()
	store, err := imagebuild.OpenStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer imagebuild.CloseStore(store)
	var log bytes.Buffer
	local := "localhost/" + name
	if _, err := imagebuild.Build(ctx, store, dir, imagebuild.BuildOptions{Output: local, Created: created, Sys: sys, Log: &log}); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, tailLines(log.String(), 40))
	}
	repo := registry + "/" + strings.Split(name, ":")[0]
	digest, err := imagebuild.Push(ctx, store, local, "docker://"+registry+"/"+name, sys, nil)
	if err != nil {
		t.Fatal(err)
	}
	return repo + "@" + digest
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyDir copies the regular files of src (not its folders) into dst with their modes.
func copyDir(t *testing.T, src, dst string) {
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if err := stage(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), uint32(info.Mode().Perm())); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStandInRHCOS builds the RHCOS layers' Containerfiles for real, against the stand-in
// rhel-coreos and rhel-coreos-extensions images, and the on-cluster content the way MCO builds
// it:
//   - out-of-cluster: the ocp-4.19 layer (dnf, bootc container lint) and the ocp-4.18 layer
//     (rpm-ostree, ostree container commit) built with buildah, pushed, and build-layer verify
//     finds nothing: the packages are installed without their documentation, pacemaker's
//     generated authkey is in no layer, our files and the links enabling our units are there, the
//     packages' /var folders have tmpfiles entries (or the lint would have failed the build);
//   - on-cluster: the MachineOSConfig build-layer wrote for the pushed 4.19 layer, its content
//     appended to a stand-in of MCO's "configs" stage that installs the two-node-ha extension
//     from the extensions image, builds, and verify finds only what MCO's own step does
//     differently: no tnf-layer labels (the image is MCO's), the packages' /var folders made by
//     rpm-ostree's tmpfiles entries instead of the layer's, their documentation, and in MCO's
//     layer the key the stand-in pacemaker generates (the image is built for one cluster; our
//     content removes the key from what the nodes deploy).
func TestStandInRHCOS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	dir := t.TempDir()
	storeDir := labStore(t, ctx)
	registry := releasetest.Registry(t)
	sys := &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue}

	baseCtx := filepath.Join(dir, "base")
	copyDir(t, standInDir, baseCtx)
	if err := os.Rename(filepath.Join(baseCtx, "base.Containerfile"), filepath.Join(baseCtx, "Containerfile")); err != nil {
		t.Fatal(err)
	}
	base := buildAndPush(t, ctx, storeDir, baseCtx, registry, "standin/rhel-coreos:4.19", sys)

	// The stand-in lint refuses what it stands for, or passing it would prove nothing.
	lintCtx := filepath.Join(dir, "lint")
	if err := os.MkdirAll(lintCtx, 0o755); err != nil {
		t.Fatal(err)
	}
	stray := "FROM " + base + "\nRUN mkdir -p /var/lib/stray /usr/local/bin && touch /usr/local/bin/tool && bootc container lint\n"
	if err := os.WriteFile(filepath.Join(lintCtx, "Containerfile"), []byte(stray), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := imagebuild.OpenStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	var lintLog bytes.Buffer
	_, err = imagebuild.Build(ctx, store, lintCtx, imagebuild.BuildOptions{Output: "localhost/standin/lint", Created: created, Sys: sys, Log: &lintLog})
	imagebuild.CloseStore(store)
	for _, want := range []string{"/var/lib/stray: content in /var without a tmpfiles.d entry", "/usr/local/bin/tool: content under /usr/local"} {
		if err == nil || !strings.Contains(lintLog.String(), want) {
			t.Errorf("the stand-in lint passed stray content (%v), want %q:\n%s", err, want, tailLines(lintLog.String(), 10))
		}
	}

	extCtx := filepath.Join(dir, "extensions")
	standInRepository(t, filepath.Join(extCtx, "extensions"))
	if err := os.WriteFile(filepath.Join(extCtx, "Containerfile"), []byte("FROM scratch\nCOPY extensions/ /usr/share/rpm-ostree/extensions/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	extensions := buildAndPush(t, ctx, storeDir, extCtx, registry, "standin/rhel-coreos-extensions:4.19", sys)

	pushed := map[string]string{}
	for _, ocp := range []string{"4.19", "4.18"} {
		o := Options{OCP: ocp, Base: base, Extensions: extensions, Release: ocp + ".1", Source: repoRoot(t), Store: storeDir, Commit: "test", Version: "1.0",
			SkipTLSVerify: true, Push: "docker://" + registry + "/tnf/layer:ocp-" + ocp}
		if ocp == "4.19" {
			o.EmitManifests, o.Rollout = filepath.Join(dir, "manifests"), RolloutOnCluster
			o.PushSpec, o.PushSecret = "image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image:latest", "push"
		}
		var log bytes.Buffer
		s, err := Build(ctx, o, Output{Log: &log})
		if err != nil {
			t.Fatalf("ocp-%s: %v\n%s", ocp, err, tailLines(log.String(), 40))
		}
		if !strings.Contains(log.String(), "bootc (stand-in) lint: ok") {
			t.Errorf("ocp-%s: the build did not end with the stand-in lint:\n%s", ocp, tailLines(log.String(), 20))
		}
		v, err := Verify(ctx, Options{OCP: ocp, SkipTLSVerify: true}, s.Pushed, "1.0")
		if err != nil {
			t.Errorf("ocp-%s: verify: %v\n%s", ocp, err, strings.Join(v.Findings, "\n"))
		}
		pushed[ocp] = strings.TrimPrefix(s.Pushed, "docker://")
		t.Logf("ocp-%s: %s, %d bytes over the stand-in base in %d layers", ocp, pushed[ocp], s.AddedBytes, len(s.AddedLayers))
	}

	data, err := os.ReadFile(filepath.Join(dir, "manifests", "machineosconfig-master.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var mosc mcfgv1.MachineOSConfig
	if err := yaml.UnmarshalStrict(data, &mosc); err != nil {
		t.Fatal(err)
	}
	content := mosc.Spec.Containerfile[0].Content
	if !strings.Contains(content, "FROM "+pushed["4.19"]+" AS payload") {
		t.Fatalf("content does not copy from the pushed layer %s:\n%s", pushed["4.19"], content)
	}
	mcoCtx := filepath.Join(dir, "mco")
	var cf bytes.Buffer
	tmpl := template.Must(template.ParseFiles(filepath.Join(standInDir, "mco-build.Containerfile.tmpl")))
	if err := tmpl.Execute(&cf, map[string]string{"Base": base, "Extensions": extensions, "Packages": strings.Join(twoNodeHA, " "),
		"Pool": mosc.Spec.MachineConfigPool.Name, "Content": content}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mcoCtx, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mcoCtx, "Containerfile"), cf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	final := buildAndPush(t, ctx, storeDir, mcoCtx, registry, "standin/os-image:latest", sys)
	v, err := Verify(ctx, Options{OCP: "4.19", SkipTLSVerify: true}, "docker://"+final, "")
	want := []string{
		containerfile.VarTmpfilesConf + ": missing (the packages' /var folders would not exist on a node that receives the layer as an update)",
		"/usr/share/doc/fence-agents-all/README: documentation of package fence-agents-all (the layer installs its packages without it)",
		"/usr/share/doc/pacemaker/README: documentation of package pacemaker (the layer installs its packages without it)",
		"/usr/share/doc/pcs/README: documentation of package pcs (the layer installs its packages without it)",
		"label io.tnf-layer.layer: missing", "label io.tnf-layer.release: missing",
		"label io.tnf-layer.source-commit: missing", "label io.tnf-layer.version: missing",
		"layer 5: /etc/pacemaker/authkey: a cluster authentication key (each cluster makes its own)",
	}
	if err == nil || strings.Join(v.Findings, "\n") != strings.Join(want, "\n") {
		t.Errorf("the on-cluster build: %v, findings:\n%s\nwant:\n%s", err, strings.Join(v.Findings, "\n"), strings.Join(want, "\n"))
	}
	// The key MCO's extension step left in its layer is gone from what the nodes deploy.
	var key bool
	err = openImage(t, ctx, "docker://"+final, sys).Walk(ctx, func(_ int, hdr *tar.Header, _ io.Reader) error {
		switch strings.TrimPrefix(hdr.Name, "./") {
		case "etc/pacemaker/authkey":
			key = true
		case "etc/pacemaker/.wh.authkey":
			key = false
		}
		return nil
	})
	if err != nil || key {
		t.Errorf("the on-cluster image deploys /etc/pacemaker/authkey (%v)", err)
	}
}
