//go:build integration

package buildlayer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/build/manifests"
	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"

	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
)

var (
	digest     = func(c byte) string { return "@sha256:" + strings.Repeat(string(c), 64) }
	base       = "quay.io/openshift-release-dev/ocp-v4.0-art-dev" + digest('1')
	extensions = "quay.io/openshift-release-dev/ocp-v4.0-art-dev" + digest('2')
	layerImage = "registry.example.com/tnf/layer" + digest('3')
)

func repoRoot(t testing.TB) string {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func tnfYAML(t *testing.T, dir string) string { return tnfYAMLWith(t, dir, "") }

// tnfYAMLWith is tnfYAML with more lines.
func tnfYAMLWith(t *testing.T, dir, more string) string {
	for _, n := range []string{"pw1", "pw2"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("secret-"+n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "tnf.yaml")
	body := `clusterName: lab
nodes:
- {name: node1, ip: 192.168.122.11, bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/1", username: admin, passwordFile: pw1}}
- {name: node2, ip: 192.168.122.12, bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/2", username: admin, passwordFile: pw2}}
` + more
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func hashFiles(t *testing.T, dir string) map[string][32]byte {
	out := map[string][32]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDryRun renders the 4.19 layer with the out-of-cluster manifests twice: the context is the
// same to the byte (reproducible), the manifests decode strictly and pass their CRDs, the secrets
// are only in the node configuration and never in the context. Then the on-cluster manifests of
// 4.19 to 4.22 (4.21 the first release whose etcd is 3.6), each MachineOSConfig's content
// labelled with its release.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	o := Options{OCP: "4.19", Base: base, Extensions: extensions, Release: "4.19.7", Source: repoRoot(t), Commit: "abc123",
		Cluster: tnfYAML(t, dir), LayerImage: layerImage, PushSpec: "registry.example.com/tnf/os-image:latest", PushSecret: "push",
		DryRun: filepath.Join(dir, "out")}
	s, err := DryRun(o)
	if err != nil {
		t.Fatal(err)
	}
	first := hashFiles(t, filepath.Join(dir, "out", "context"))
	// A folder it did not write is refused before anything is rendered, and left as it was.
	foreign := o
	foreign.DryRun = t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign.DryRun, "go.mod"), []byte("module mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DryRun(foreign); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("dry run into a folder it did not write: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(foreign.DryRun, "go.mod")); err != nil || string(data) != "module mine\n" {
		t.Errorf("the foreign folder changed: %q %v", data, err)
	}
	firstKey, err := manifests.EarlierAuthkey(filepath.Join(dir, "out", "manifests"), "master")
	if err != nil || len(firstKey) != 256 {
		t.Fatalf("the first render's Corosync key: %d bytes, %v", len(firstKey), err)
	}
	if s, err = DryRun(o); err != nil {
		t.Fatal(err)
	}
	second := hashFiles(t, filepath.Join(dir, "out", "context"))
	for f, h := range first {
		if second[f] != h {
			t.Errorf("%s differs between two runs", f)
		}
	}
	for _, want := range []string{"Containerfile", "tree/usr/lib/ocf/resource.d/tnf/etcd", "tree/usr/libexec/tnf/tnf-etcd-agent", "tree/usr/bin/tnfctl",
		"tree/usr/share/doc/tnf-layer/runbooks.md", "tree/usr/share/doc/tnf-layer/operate.md", "tree/usr/share/doc/tnf-layer/reference/README.md"} {
		if _, ok := first[want]; !ok {
			t.Errorf("context lacks %s: %v", want, first)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "out", "context", "tree", "usr", "bin", "tnfctl")); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("tnfctl in the tree: %v %v", st, err)
	}
	cf, _ := os.ReadFile(s.Containerfile)
	for _, want := range []string{"FROM " + base, "from=" + extensions, "RUN bootc container lint", `io.tnf-layer.release="4.19.7"`, "COPY tree/ /"} {
		if !strings.Contains(string(cf), want) {
			t.Errorf("Containerfile lacks %q:\n%s", want, cf)
		}
	}
	// By default the secrets are Secrets: no MachineConfig, no other manifest and no build
	// context carries one, and the second render kept the first one's Corosync key.
	// Each node has its own account, Role and taint role.
	secretObjects := []string{"clusterrole-tnf-node-topology-reader.yaml", "clusterrole-tnf-out-of-service-node1.yaml", "clusterrole-tnf-out-of-service-node2.yaml",
		"clusterrolebinding-tnf-node-auth-delegator.yaml", "clusterrolebinding-tnf-node-topology-reader.yaml", "clusterrolebinding-tnf-out-of-service-node1.yaml", "clusterrolebinding-tnf-out-of-service-node2.yaml",
		"role-tnf-node-node1.yaml", "role-tnf-node-node2.yaml", "rolebinding-tnf-node-node1.yaml", "rolebinding-tnf-node-node2.yaml",
		"secret-fencing-credentials-node1.yaml", "secret-fencing-credentials-node2.yaml", "secret-tnf-corosync-authkey.yaml",
		"serviceaccount-tnf-node-node1.yaml", "serviceaccount-tnf-node-node2.yaml",
		// The status publisher's: what the nodes' accounts may write, and the CRD.
		"clusterrole-tnf-node-status-publisher.yaml", "clusterrolebinding-tnf-node-status-publisher.yaml", "role-tnf-node-status-publisher.yaml",
		"rolebinding-tnf-node-status-publisher.yaml", "customresourcedefinition-pacemakerclusters.etcd.openshift.io.yaml"}
	checkRollout(t, s.Manifests, slices.Sorted(slices.Values(append([]string{"99-master-tnf-node-config.yaml", "99-master-tnf-os-image.yaml", "clusterrole-tnf-handover.yaml",
		"machineconfiguration-cluster.yaml", "prometheusrule-tnf-layer.yaml", "validatingadmissionpolicy-tnf-layer-removal-guard.yaml", "validatingadmissionpolicybinding-tnf-layer-removal-guard.yaml", "tnf-metrics-endpoints.yaml", "tnf-metrics-service.yaml", "tnf-metrics-servicemonitor.yaml"}, secretObjects...))))
	key := checkSecretsOnlyInSecrets(t, s.Manifests)
	// The alerts open the runbooks of the commit the layer was built from.
	if rule, err := os.ReadFile(filepath.Join(o.DryRun, "manifests", "prometheusrule-tnf-layer.yaml")); err != nil ||
		!strings.Contains(string(rule), "runbook_url: https://github.com/tnf-layer/tnf-layer/blob/abc123/docs/runbooks.md#tnfpeermissing") {
		t.Errorf("the PrometheusRule's runbooks are not at the build's commit: %v\n%s", err, rule)
	}
	// A node's taint role reaches its peer's Node by name, nothing else.
	if role, err := os.ReadFile(filepath.Join(o.DryRun, "manifests", "clusterrole-tnf-out-of-service-node1.yaml")); err != nil ||
		!strings.Contains(string(role), "resourceNames:\n  - node2\n  resources") {
		t.Errorf("node1's out-of-service ClusterRole does not name node2 alone (%v):\n%s", err, role)
	}
	if firstKey != nil && !bytes.Equal(key, firstKey) {
		t.Errorf("the second render made a new Corosync key")
	}
	// In the MachineConfig (a lab's setting), the earlier render's key too.
	inMC := o
	inMC.SecretsIn, inMC.DryRun = SecretsInMachineConfig, filepath.Join(dir, "in-machineconfig")
	var mcKeys [][]byte
	for range 2 {
		s, err := DryRun(inMC)
		if err != nil {
			t.Fatal(err)
		}
		checkRollout(t, s.Manifests, []string{"99-master-tnf-node-config.yaml", "99-master-tnf-os-image.yaml", "clusterrole-tnf-handover.yaml", "clusterrole-tnf-out-of-service.yaml",
			"machineconfiguration-cluster.yaml", "prometheusrule-tnf-layer.yaml", "validatingadmissionpolicy-tnf-layer-removal-guard.yaml", "validatingadmissionpolicybinding-tnf-layer-removal-guard.yaml", "tnf-metrics-endpoints.yaml", "tnf-metrics-service.yaml", "tnf-metrics-servicemonitor.yaml"})
		key, err := manifests.EarlierAuthkey(filepath.Join(inMC.DryRun, "manifests"), "master")
		if err != nil || len(key) != 256 {
			t.Fatalf("the MachineConfig's key: %d bytes, %v", len(key), err)
		}
		mcKeys = append(mcKeys, key)
	}
	if !bytes.Equal(mcKeys[0], mcKeys[1]) {
		t.Errorf("the second render into the MachineConfig made a new Corosync key")
	}
	for _, ocp := range []string{"4.19", "4.20", "4.21", "4.22"} {
		on := o
		on.OCP, on.Release, on.Rollout, on.DryRun = ocp, ocp+".3", RolloutOnCluster, filepath.Join(dir, "on-cluster-"+ocp)
		s, err := DryRun(on)
		if err != nil {
			t.Fatal(err)
		}
		if cf, err := os.ReadFile(s.Containerfile); err != nil || !strings.Contains(string(cf), `io.tnf-layer.release="`+ocp+`.3"`) {
			t.Errorf("on-cluster %s: the content does not name its release (%v):\n%s", ocp, err, cf)
		}
		checkRollout(t, s.Manifests, slices.Sorted(slices.Values(append([]string{"99-master-tnf-extensions.yaml", "99-master-tnf-node-config.yaml", "clusterrole-tnf-handover.yaml",
			"machineconfiguration-cluster.yaml", "machineosconfig-master.yaml", "prometheusrule-tnf-layer.yaml", "validatingadmissionpolicy-tnf-layer-removal-guard.yaml", "validatingadmissionpolicybinding-tnf-layer-removal-guard.yaml", "tnf-metrics-endpoints.yaml", "tnf-metrics-service.yaml",
			"tnf-metrics-servicemonitor.yaml"}, secretObjects...))))
		checkSecretsOnlyInSecrets(t, s.Manifests)
		checkIgnitionSpec(t, s.Manifests, "3.5.0")
	}
	// 4.18's MCO accepts Ignition up to 3.4 (out-of-cluster only: its release has no extension).
	old := o
	old.OCP, old.Release, old.DryRun = "4.18", "4.18.9", filepath.Join(dir, "out-of-cluster-4.18")
	s418, err := DryRun(old)
	if err != nil {
		t.Fatal(err)
	}
	checkIgnitionSpec(t, s418.Manifests, "3.4.0")
	err = filepath.Walk(filepath.Join(dir, "out", "context"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "secret-pw") {
				t.Errorf("a BMC password is in the build context: %s", p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkSecretsOnlyInSecrets: the BMC passwords (tnfYAML's) and the Corosync key are in the
// Secrets and in no other manifest, in any form; it returns the key.
func checkSecretsOnlyInSecrets(t *testing.T, paths []string) []byte {
	t.Helper()
	var key []byte
	for _, p := range paths {
		if strings.HasSuffix(p, manifests.AuthkeyManifest) {
			var err error
			if key, err = manifests.EarlierAuthkey(strings.TrimSuffix(p, manifests.AuthkeyManifest), "master"); err != nil || len(key) != 256 {
				t.Fatalf("%s: %d bytes, %v", p, len(key), err)
			}
		}
	}
	forms := []string{"secret-pw1", "secret-pw2", base64.StdEncoding.EncodeToString([]byte("secret-pw1")), base64.StdEncoding.EncodeToString([]byte("secret-pw2")),
		base64.StdEncoding.EncodeToString(key), url.PathEscape(base64.StdEncoding.EncodeToString(key))}
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "secret-") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range forms {
			if strings.Contains(string(data), f) {
				t.Errorf("%s carries secret form %d", filepath.Base(p), i) // not the value itself
			}
		}
	}
	return key
}

// checkRollout: the manifests are exactly want (one rollout, never both), each one the apiserver
// would accept (its CRD from the pinned openshift/api, schema and CEL rules), and the
// on-cluster content takes no package from a release: the extension MachineConfig names them.
func checkRollout(t *testing.T, paths, want []string) {
	t.Helper()
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	if !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Fatalf("manifests %v, want %v", names, want)
	}
	crds, err := crdvalidate.OpenShift()
	if err != nil {
		t.Fatal(err)
	}
	monitoring, err := crdvalidate.PrometheusOperator()
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(crds, monitoring)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var typed any = &mcfgv1.MachineConfig{}
		switch {
		case strings.HasPrefix(filepath.Base(p), "machineosconfig-"):
			typed = &mcfgv1.MachineOSConfig{}
		case strings.HasPrefix(filepath.Base(p), "machineconfiguration-"):
			typed = &operatorv1.MachineConfiguration{}
		case strings.HasPrefix(filepath.Base(p), "clusterrole-"):
			typed = &rbacv1.ClusterRole{}
		case strings.HasPrefix(filepath.Base(p), "clusterrolebinding-"):
			typed = &rbacv1.ClusterRoleBinding{}
		case strings.HasPrefix(filepath.Base(p), "rolebinding-"):
			typed = &rbacv1.RoleBinding{}
		case strings.HasPrefix(filepath.Base(p), "role-"):
			typed = &rbacv1.Role{}
		case strings.HasPrefix(filepath.Base(p), "customresourcedefinition-"):
			typed = &apiextensionsv1.CustomResourceDefinition{}
		case strings.HasPrefix(filepath.Base(p), "secret-"):
			typed = &corev1.Secret{}
		case strings.HasPrefix(filepath.Base(p), "serviceaccount-"):
			typed = &corev1.ServiceAccount{}
		case strings.HasPrefix(filepath.Base(p), "prometheusrule-"):
			typed = &monitoringv1.PrometheusRule{}
		case strings.HasPrefix(filepath.Base(p), "validatingadmissionpolicy-"):
			typed = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		case strings.HasPrefix(filepath.Base(p), "validatingadmissionpolicybinding-"):
			typed = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		case strings.HasSuffix(p, "-servicemonitor.yaml"):
			typed = &monitoringv1.ServiceMonitor{}
		case strings.HasSuffix(p, "-service.yaml"):
			typed = &corev1.Service{}
		case strings.HasSuffix(p, "-endpoints.yaml"):
			//lint:ignore SA1019 build-layer writes Endpoints on purpose (manifests.MetricsScrape)
			typed = &corev1.Endpoints{}
		}
		if err := yaml.UnmarshalStrict(data, typed); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		crd, custom := crds[obj["kind"].(string)]
		if !custom {
			continue // a built-in kind (Service, Endpoints): its strict decode above is the check
		}
		if err := crd.Validate(obj); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err) // not the object: the node configuration carries passwords
		}
		if mosc, ok := typed.(*mcfgv1.MachineOSConfig); ok {
			content := mosc.Spec.Containerfile[0].Content
			if strings.Contains(content, "dnf") || strings.Contains(content, "extensions") || !strings.Contains(content, "COPY --from=payload /usr/lib/systemd/system/tnf-reconfigure.service") {
				t.Errorf("%s content:\n%s", p, content)
			}
		}
	}
}

// TestDryRunBadInput: each bad input is a clear error, and nothing is written.
func TestDryRunBadInput(t *testing.T) {
	dir := t.TempDir()
	ic := filepath.Join(dir, "install-config.yaml")
	if err := os.WriteFile(ic, []byte("metadata: {name: x}\ncontrolPlane: {name: master}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := Options{OCP: "4.19", Base: base, Extensions: extensions, Release: "4.19.7", Source: repoRoot(t)}
	rows := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"unknown release", func(o *Options) { o.OCP = "9.99" }, "layers/ocp-9.99.yaml"},
		// Outside a checkout, go build's own "go.mod file not found" named no flag.
		{"--source not a checkout", func(o *Options) { o.Source = dir }, "--source " + dir + ": no go.mod"},
		// The image's release label is never guessed.
		{"--base and --extensions without --release", func(o *Options) { o.Release = "" }, "--release: missing"},
		{"--release of another minor", func(o *Options) { o.Release = "4.20.1" }, `--release: "4.20.1" is not a release of OpenShift 4.19`},
		{"--release not exact", func(o *Options) { o.Release = "4.19" }, `--release: "4.19" is not a release`},
		{"no payload and no base", func(o *Options) { o.Base, o.Extensions = "", "" }, "--release-image: missing"},
		{"both --ocp and --layer", func(o *Options) { o.Layer = "lab" }, "exclude"},
		{"release not found", func(o *Options) {
			o.Base = ""
			o.ReleaseImage = "oci:" + filepath.Join(dir, "no-such-layout") + ":4.19.0"
		}, "no-such-layout"},
		{"lab without base", func(o *Options) {
			o.OCP = ""
			o.Layer = "lab"
			o.LayersDir = editedLayer(t, "lab", "base: localhost/tnf-lab-base:latest\n", "")
		}, "base"},
		{"base by tag", func(o *Options) { o.Base = "quay.io/x/rhcos:4.19" }, "digest"},
		{"extensions by tag", func(o *Options) { o.Extensions = "quay.io/openshift-release-dev/ocp-v4.0-art-dev:4.19" }, "extensions image"},
		{"install-config without fencing", func(o *Options) { o.InstallCfg = ic }, "controlPlane.fencing.credentials"},
		{"bad push spec", func(o *Options) {
			o.LayerImage, o.Rollout, o.PushSpec, o.PushSecret = layerImage, RolloutOnCluster, "registry.example:5/x:t", "s"
		}, "--push-spec"},
		{"layer image by tag", func(o *Options) { o.LayerImage = "registry.example.com/tnf/layer:latest" }, "digest"},
		{"unknown rollout", func(o *Options) { o.LayerImage = layerImage; o.Rollout = "both" }, "--rollout"},
		{"on-cluster without the extension", func(o *Options) {
			o.OCP, o.Release = "4.18", "4.18.9"
			o.LayerImage, o.Rollout, o.PushSpec, o.PushSecret = layerImage, RolloutOnCluster, "registry.example.com/tnf/os-image:latest", "push"
		}, "--rollout on-cluster: layer ocp-4.18 has no RHCOS extension"},
		{"upper-case pool", func(o *Options) { o.LayerImage = layerImage; o.Pool = "Master" }, "--pool"},
		{"push secret not a DNS name", func(o *Options) {
			o.LayerImage, o.Rollout, o.PushSpec, o.PushSecret = layerImage, RolloutOnCluster, "registry.example.com/tnf/os-image:latest", "Push_Secret"
		}, "--push-secret"},
		{"exec runtime on RHCOS", func(o *Options) {
			o.Cluster = tnfYAMLWith(t, t.TempDir(), "resources: {etcd: {runtime: exec}}\n")
		}, `resources.etcd.runtime: "exec": layer ocp-4.19 is RHCOS`},
		{"bad layer definition", func(o *Options) {
			o.LayersDir = editedLayer(t, "ocp-4.19", "finalize: bootc-lint", "finalize: sometimes")
		}, "finalize"},
	}
	for _, r := range rows {
		o := good
		o.DryRun = filepath.Join(dir, "out-"+strings.ReplaceAll(r.name, " ", "-"))
		r.edit(&o)
		if o.LayersDir != "" && o.Layer == "" {
			o.OCP = "4.19"
		}
		o.CacheDir = filepath.Join(dir, "cache")
		_, err := DryRun(o)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: error %v, want one with %q", r.name, err, r.want)
		}
		if _, err := os.Stat(o.DryRun); !os.IsNotExist(err) {
			t.Errorf("%s: %s was written", r.name, o.DryRun)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".out-*"))
	if len(left) != 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
}

// editedLayer writes a copy of a shipped layer definition with one edit into a folder of its own
// and returns the folder (for --layers-dir).
func editedLayer(t *testing.T, name, old, new string) string {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "layers", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), old, new, 1)
	if edited == string(data) {
		t.Fatalf("%s.yaml has no %q", name, old)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDryRunResolvesTheRelease: without --base and --extensions, both come from the release
// payload's image-references, and the layer records the exact release its release-metadata
// names; the result is cached for a digest-pinned release.
func TestDryRunResolvesTheRelease(t *testing.T) {
	dir := t.TempDir()
	payload := filepath.Join(dir, "payload")
	releasetest.WritePayload(t, payload, "4.19.7", releasetest.ImageReferences(map[string]string{"rhel-coreos": base, "rhel-coreos-extensions": extensions}))
	o := Options{OCP: "4.19", ReleaseImage: "oci:" + payload + ":4.19.7", Source: repoRoot(t), CacheDir: filepath.Join(dir, "cache"), DryRun: filepath.Join(dir, "out")}
	s, err := DryRun(o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Base != base || s.Release == nil || s.Release.Extensions != extensions || s.Release.Version != "4.19.7" {
		t.Fatalf("%+v", s)
	}
	cf, _ := os.ReadFile(s.Containerfile)
	if !strings.Contains(string(cf), "from="+extensions) || !strings.Contains(string(cf), `io.tnf-layer.release="4.19.7"`) {
		t.Fatalf("Containerfile:\n%s", cf)
	}
	if cached, _ := filepath.Glob(filepath.Join(dir, "cache", "releases", "*.json")); len(cached) != 1 {
		t.Fatalf("cache: %v", cached)
	}
	// A --release the payload does not name is refused, not relabelled.
	o.Release, o.DryRun = "4.19.9", filepath.Join(dir, "out-mismatch")
	if _, err := DryRun(o); err == nil || !strings.Contains(err.Error(), "--release: 4.19.9, but --release-image") {
		t.Errorf("--release 4.19.9 with a 4.19.7 payload: %v", err)
	}
}

// checkIgnitionSpec: the node configuration MachineConfig among the manifests carries spec.
func checkIgnitionSpec(t *testing.T, manifests []string, spec string) {
	t.Helper()
	i := slices.IndexFunc(manifests, func(m string) bool { return strings.HasSuffix(m, "-tnf-node-config.yaml") })
	if i < 0 {
		t.Fatalf("no node configuration among %v", manifests)
	}
	data, err := os.ReadFile(manifests[i])
	if err != nil {
		t.Fatal(err)
	}
	var mc struct {
		Spec struct {
			Config struct {
				Ignition struct{ Version string } `json:"ignition"`
			} `json:"config"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &mc); err != nil || mc.Spec.Config.Ignition.Version != spec {
		t.Errorf("%s: ignition.version %q (%v), want %s", manifests[i], mc.Spec.Config.Ignition.Version, err, spec)
	}
}
