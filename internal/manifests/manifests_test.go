package manifests

import (
	"compress/gzip"
	"encoding/base64"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ign "github.com/coreos/ignition/v2/config/v3_5"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

const (
	layerImage = "registry.example.com/tnf/layer@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	extImage   = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func testLayer() Layer {
	return Layer{Image: layerImage, Extensions: extImage, Packages: []string{"pacemaker", "pcs", "fence-agents-all"},
		Paths:  []string{"/usr/lib/ocf/resource.d/tnf/etcd", "/usr/libexec/tnf/", "/usr/bin/tnfctl"},
		Enable: []string{"corosync.service", "tnf-setup.service"}, Finalize: "bootc container lint"}
}

// TestMachineOSConfig: the object decodes strictly into openshift/api's v1 type, is named after
// its pool, and its content's last stage is "FROM configs AS final".
func TestMachineOSConfig(t *testing.T) {
	content, err := Containerfile(testLayer())
	if err != nil {
		t.Fatal(err)
	}
	m, err := MachineOSConfig(MachineOSConfigInput{Pool: "master", PushSpec: "image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image:latest", PushSecret: "push"}, content)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back mcfgv1.MachineOSConfig
	if err := yaml.UnmarshalStrict(out, &back); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, out)
	}
	if back.Name != "master" || back.Spec.MachineConfigPool.Name != "master" || back.Kind != "MachineOSConfig" ||
		back.APIVersion != "machineconfiguration.openshift.io/v1" || back.Spec.ImageBuilder.ImageBuilderType != mcfgv1.JobBuilder {
		t.Fatalf("%+v", back)
	}
	cf := back.Spec.Containerfile
	if len(cf) != 1 || cf[0].ContainerfileArch != mcfgv1.NoArch {
		t.Fatalf("containerFile: %+v", cf)
	}
	var froms []string
	for _, l := range strings.Split(cf[0].Content, "\n") {
		if strings.HasPrefix(l, "FROM ") {
			froms = append(froms, l)
		}
	}
	if froms[0] != "FROM "+layerImage+" AS payload" || froms[len(froms)-1] != "FROM configs AS final" {
		t.Fatalf("stages: %q", froms)
	}
	if len(cf[0].Content) > MaxContainerfile {
		t.Fatal("content too long")
	}
	// The copied files bring no enablement links: the build makes them, before the lint.
	enable := strings.Index(cf[0].Content, "\nRUN systemctl enable corosync.service tnf-setup.service\n")
	if enable < 0 || enable < strings.LastIndex(cf[0].Content, "COPY --from=payload") || enable > strings.Index(cf[0].Content, "RUN bootc container lint") {
		t.Fatalf("the units are not enabled after the copies and before the lint:\n%s", cf[0].Content)
	}
}

func TestMachineOSConfigBadInput(t *testing.T) {
	l := testLayer()
	for i := 0; i < 200; i++ {
		l.Paths = append(l.Paths, "/usr/share/tnf/templates/a-long-file-name-for-the-limit")
	}
	if _, err := Containerfile(l); err == nil || !strings.Contains(err.Error(), "4096") {
		t.Errorf("over-long content: %v", err)
	}
	l = testLayer()
	l.Image = "registry.example.com/tnf/layer:latest"
	if _, err := Containerfile(l); err == nil {
		t.Error("a layer by tag accepted")
	}
	l = testLayer()
	l.Enable = nil
	if _, err := Containerfile(l); err == nil || !strings.Contains(err.Error(), "enable") {
		t.Errorf("a layer enabling nothing accepted: %v", err)
	}
	for _, r := range []struct {
		in   MachineOSConfigInput
		want string
	}{
		{MachineOSConfigInput{PushSpec: "a.b/c:d", PushSecret: "s"}, "--pool"},
		{MachineOSConfigInput{Pool: "master", PushSpec: "registry/c:d", PushSecret: "s"}, "--push-spec"},
		{MachineOSConfigInput{Pool: "master", PushSpec: "a.b/c", PushSecret: "s"}, "--push-spec"},
		{MachineOSConfigInput{Pool: "master", PushSpec: "a.b/" + strings.Repeat("x", 450) + ":t", PushSecret: "s"}, "--push-spec"},
		{MachineOSConfigInput{Pool: "master", PushSpec: "a.b/c:d"}, "--push-secret"},
	} {
		if _, err := MachineOSConfig(r.in, "FROM configs AS final"); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%+v: %v, want an error naming %s", r.in, err, r.want)
		}
	}
}

func TestOSImageURL(t *testing.T) {
	mc, err := OSImageURL("master", layerImage)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Marshal(mc)
	var back mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(out, &back); err != nil || back.Spec.OSImageURL != layerImage || back.Labels["machineconfiguration.openshift.io/role"] != "master" {
		t.Fatalf("%v %+v", err, back)
	}
	if _, err := OSImageURL("master", "registry.example.com/tnf/layer:latest"); err == nil {
		t.Fatal("osImageURL by tag accepted")
	}
}

// TestNodeConfig: the node configuration from an install-config becomes a MachineConfig whose
// Ignition 3.5 writes cluster.yaml (no secret in it) and one 0600 file per password.
func TestNodeConfig(t *testing.T) {
	dir := t.TempDir()
	ic := filepath.Join(dir, "install-config.yaml")
	if err := os.WriteFile(ic, []byte(`apiVersion: v1
metadata: {name: branch-42}
controlPlane:
  name: master
  replicas: 2
  fencing:
    credentials:
    - {hostName: master-1, address: "redfish+https://192.0.2.21/redfish/v1/Systems/1", username: admin, password: "s3cr3t-one"}
    - {hostName: master-0, address: "redfish+https://[fd00::20]:8443/redfish/v1/Systems/1", username: admin, password: "s3cr3t-zero", certificateVerification: Disabled}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := clusterconfig.LoadInstallConfig(ic, map[string]string{"master-0": "192.0.2.10", "master-1": "192.0.2.11"})
	if err != nil {
		t.Fatal(err)
	}
	in.Files = append(in.Files, clusterconfig.File{Path: clusterconfig.EtcdPodManifest, Data: []byte("kind: Pod\n")})
	mc, err := NodeConfig("master", in)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Marshal(mc)
	var back mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(out, &back); err != nil {
		t.Fatal(err)
	}
	cfg, rpt, err := ign.Parse(back.Spec.Config.Raw)
	if err != nil || rpt.IsFatal() {
		t.Fatalf("ignition: %v %s", err, rpt.String())
	}
	files := map[string]string{}
	modes := map[string]int{}
	for _, f := range cfg.Storage.Files {
		data := decodeSource(t, *f.Contents.Source)
		if f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
			zr, err := gzip.NewReader(strings.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			data = string(b)
		}
		files[f.Path], modes[f.Path] = data, *f.Mode
	}
	if modes[clusterconfig.EtcdPodManifest] != 0o644 || files[clusterconfig.EtcdPodManifest] != "kind: Pod\n" {
		t.Fatalf("pod manifest: %o %q", modes[clusterconfig.EtcdPodManifest], files[clusterconfig.EtcdPodManifest])
	}
	if modes["/etc/tnf/cluster.yaml"] != 0o644 || modes["/etc/tnf/secrets/master-0.password"] != 0o600 || modes["/etc/tnf/secrets/master-1.password"] != 0o600 {
		t.Fatalf("modes: %v", modes)
	}
	if files["/etc/tnf/secrets/master-0.password"] != "s3cr3t-zero" {
		t.Fatalf("secret: %q", files["/etc/tnf/secrets/master-0.password"])
	}
	if strings.Contains(files["/etc/tnf/cluster.yaml"], "s3cr3t") {
		t.Fatal("a password is in cluster.yaml")
	}
	var c clusterconfig.Config
	if err := yaml.UnmarshalStrict([]byte(files["/etc/tnf/cluster.yaml"]), &c); err != nil {
		t.Fatal(err)
	}
	if c.ClusterName != "branch-42" || c.Nodes[0].Name != "master-0" || c.FenceRaceWinner != "master-0" || c.Nodes[0].BMC.CertificateVerification != "Disabled" {
		t.Fatalf("cluster.yaml: %+v", c)
	}
}

func decodeSource(t *testing.T, src string) string {
	u, err := url.Parse(src)
	if err != nil || u.Scheme != "data" {
		t.Fatalf("source %q", src)
	}
	meta, data, _ := strings.Cut(u.Opaque, ",")
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s, err := url.PathUnescape(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
