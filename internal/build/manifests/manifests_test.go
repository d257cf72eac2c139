package manifests

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	ign34 "github.com/coreos/ignition/v2/config/v3_4"
	ign "github.com/coreos/ignition/v2/config/v3_5"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"
)

const layerImage = "registry.example.com/tnf/layer@sha256:3333333333333333333333333333333333333333333333333333333333333333"

func testLayer() Layer {
	return Layer{Image: layerImage,
		Paths:  []string{"/usr/lib/ocf/resource.d/tnf/etcd", "/usr/libexec/tnf/", "/usr/bin/tnfctl"},
		Enable: []string{"corosync.service", "tnf-setup.service"}, Finalize: "bootc container lint"}
}

var validators struct {
	once   sync.Once
	byKind map[string]*crdvalidate.Validator
	err    error
}

// applied is obj as `oc apply` sends it (the YAML build-layer writes, decoded), after checking
// that the apiserver would accept it: the CRD of its kind from the pinned openshift/api or
// prometheus-operator, with its schema and CEL rules.
func applied(t *testing.T, obj any) map[string]any {
	t.Helper()
	out, err := Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if err := crdValidator(t, m["kind"].(string)).Validate(m); err != nil {
		t.Fatal(err) // not the object: the node configuration carries passwords
	}
	return m
}

func crdValidator(t *testing.T, kind string) *crdvalidate.Validator {
	t.Helper()
	validators.once.Do(func() {
		validators.byKind, validators.err = crdvalidate.OpenShift()
		if validators.err == nil {
			var monitoring map[string]*crdvalidate.Validator
			monitoring, validators.err = crdvalidate.PrometheusOperator()
			maps.Copy(validators.byKind, monitoring)
		}
	})
	if validators.err != nil {
		t.Fatal(validators.err)
	}
	return validators.byKind[kind]
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
	applied(t, m)
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
	// The packages come from the release's extension (Extensions), never from the content: it
	// outlives the release it was written for.
	for _, stale := range []string{"dnf", "rpm-ostree", "extensions"} {
		if strings.Contains(cf[0].Content, stale) {
			t.Errorf("content mentions %s:\n%s", stale, cf[0].Content)
		}
	}
	// The copied files bring no enablement links: the build makes them, before the lint.
	enable := strings.Index(cf[0].Content, "\nRUN rm -f /etc/pacemaker/authkey /etc/corosync/authkey && systemctl enable corosync.service tnf-setup.service\n")
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
}

// TestMachineOSConfigInputs: build-layer and the CRD agree on every input, good or bad, and
// build-layer's refusal names the flag.
func TestMachineOSConfigInputs(t *testing.T) {
	good := MachineOSConfigInput{Pool: "master", PushSpec: "registry.example.com/tnf/os-image:latest", PushSecret: "push"}
	for _, r := range []struct {
		name string
		edit func(*MachineOSConfigInput)
		flag string // "" when accepted
	}{
		{"good", func(*MachineOSConfigInput) {}, ""},
		{"in-cluster registry service", func(in *MachineOSConfigInput) {
			in.PushSpec = "image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image:latest"
		}, ""},
		{"registry with a port", func(in *MachineOSConfigInput) { in.PushSpec = "registry.example.com:5000/tnf/os-image:v1" }, ""},
		{"worker pool", func(in *MachineOSConfigInput) { in.Pool = "worker" }, ""},
		{"base image pull secret", func(in *MachineOSConfigInput) { in.BaseImagePullSecret = "layer-pull" }, ""},
		{"no pool", func(in *MachineOSConfigInput) { in.Pool = "" }, "--pool"},
		{"upper-case pool", func(in *MachineOSConfigInput) { in.Pool = "Master" }, "--pool"},
		{"pool with an underscore", func(in *MachineOSConfigInput) { in.Pool = "my_pool" }, "--pool"},
		{"no push secret", func(in *MachineOSConfigInput) { in.PushSecret = "" }, "--push-secret"},
		{"push secret not a DNS name", func(in *MachineOSConfigInput) { in.PushSecret = "Push_Secret" }, "--push-secret"},
		{"pull secret not a DNS name", func(in *MachineOSConfigInput) { in.BaseImagePullSecret = "Pull_Secret" }, "--base-image-pull-secret"},
		{"one-digit port", func(in *MachineOSConfigInput) { in.PushSpec = "registry.example:5/x:t" }, "--push-spec"},
		{"namespace with a dot", func(in *MachineOSConfigInput) { in.PushSpec = "registry.example/a.b/os-image:t" }, "--push-spec"},
		{"host without a dot", func(in *MachineOSConfigInput) { in.PushSpec = "registry/c:d" }, "--push-spec"},
		{"no tag", func(in *MachineOSConfigInput) { in.PushSpec = "registry.example.com/tnf/os-image" }, "--push-spec"},
		{"by digest", func(in *MachineOSConfigInput) { in.PushSpec = layerImage }, "--push-spec"},
		{"too long", func(in *MachineOSConfigInput) { in.PushSpec = "a.b/" + strings.Repeat("x", 450) + ":t" }, "--push-spec"},
	} {
		in := good
		r.edit(&in)
		_, err := MachineOSConfig(in, "FROM configs AS final\n")
		crdErr := crdValidator(t, "MachineOSConfig").Validate(in.object("FROM configs AS final\n"))
		switch {
		case (err == nil) != (crdErr == nil):
			t.Errorf("%s: build-layer says %v, the CRD says %v", r.name, err, crdErr)
		case r.flag == "" && err != nil:
			t.Errorf("%s: refused: %v", r.name, err)
		case r.flag != "" && (err == nil || !strings.Contains(err.Error(), r.flag)):
			t.Errorf("%s: %v, want an error naming %s", r.name, err, r.flag)
		}
	}
}

// TestExtensions: the on-cluster rollout's packages come from the release's extension, named in
// a MachineConfig the API accepts.
func TestExtensions(t *testing.T) {
	mc, err := Extensions("master", "two-node-ha")
	if err != nil {
		t.Fatal(err)
	}
	m := applied(t, mc)
	out, _ := Marshal(mc)
	var back mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(out, &back); err != nil || len(back.Spec.Extensions) != 1 || back.Spec.Extensions[0] != "two-node-ha" ||
		back.Labels["machineconfiguration.openshift.io/role"] != "master" {
		t.Fatalf("%v %+v", err, m)
	}
	if _, err := Extensions("Master", "two-node-ha"); err == nil || !strings.Contains(err.Error(), "--pool") {
		t.Errorf("pool Master: %v", err)
	}
}

func TestOSImageURL(t *testing.T) {
	mc, err := OSImageURL("master", layerImage)
	if err != nil {
		t.Fatal(err)
	}
	applied(t, mc)
	out, _ := Marshal(mc)
	var back mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(out, &back); err != nil || back.Spec.OSImageURL != layerImage || back.Labels["machineconfiguration.openshift.io/role"] != "master" {
		t.Fatalf("%v %+v", err, back)
	}
	if _, err := OSImageURL("master", "registry.example.com/tnf/layer:latest"); err == nil {
		t.Fatal("osImageURL by tag accepted")
	}
}

// installConfigInput is the node configuration of a two-node install-config with fencing
// credentials.
func installConfigInput(t *testing.T) clusterconfig.Input {
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
	in, err := clusterconfig.LoadInstallConfig(ic, map[string]string{"master-0": "192.0.2.10", "master-1": "192.0.2.11"},
		map[string]string{"master-0": strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestNodeDisruptionPolicy: the MachineConfiguration the API accepts, strict-decoded into its
// type, restarts the reconfigure unit for cluster.yaml, each BMC CA bundle and each BMC password
// file the MachineConfig carries, never for the Corosync key (Corosync reads it at start), and
// sets nothing else of the cluster's object. With the secrets in Secrets: cluster.yaml and the CA
// bundles.
func TestNodeDisruptionPolicy(t *testing.T) {
	in := installConfigInput(t)
	in.Secrets = append(in.Secrets, clusterconfig.Secret{Path: clusterconfig.AuthkeyFile, Data: []byte("key")})
	in.Files = append(in.Files, clusterconfig.File{Path: clusterconfig.BMCCAFile("master-0"), Data: []byte("ca")},
		clusterconfig.File{Path: clusterconfig.EtcdPodManifest, Data: []byte("pod")})
	mc, err := NodeDisruptionPolicy(in)
	if err != nil {
		t.Fatal(err)
	}
	m := applied(t, mc)
	if spec := m["spec"].(map[string]any); len(spec) != 1 || len(m) != 4 {
		t.Errorf("sets more than the node disruption policy: %v", m)
	}
	out, _ := Marshal(mc)
	var back operatorv1.MachineConfiguration
	if err := yaml.UnmarshalStrict(out, &back); err != nil || back.Name != "cluster" || back.APIVersion != "operator.openshift.io/v1" {
		t.Fatalf("%v %+v", err, back)
	}
	var got []string
	for _, f := range back.Spec.NodeDisruptionPolicy.Files {
		if len(f.Actions) != 1 || f.Actions[0].Type != operatorv1.RestartSpecAction || f.Actions[0].Restart.ServiceName != ReconfigureUnit {
			t.Errorf("%s: actions %+v", f.Path, f.Actions)
		}
		got = append(got, f.Path)
	}
	if want := []string{"/etc/tnf/bmc-ca/master-0.pem", "/etc/tnf/cluster.yaml", "/etc/tnf/secrets/master-0.password", "/etc/tnf/secrets/master-1.password"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	fromAPI, err := NodeDisruptionPolicy(FromAPI(in))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range fromAPI.Spec.NodeDisruptionPolicy.Files {
		got = append(got, f.Path)
	}
	if want := []string{"/etc/tnf/bmc-ca/master-0.pem", "/etc/tnf/cluster.yaml"}; !slices.Equal(got, want) {
		t.Errorf("secrets in Secrets: files %v, want %v", got, want)
	}
	if _, err := NodeDisruptionPolicy(clusterconfig.Input{}); err == nil {
		t.Error("a policy without a node configuration")
	}
}

// TestNodeConfigIgnitionSpec: each release's node configuration carries the Ignition spec its
// MCO accepts (3.4.0 up to 4.18, 3.5.0 from 4.19), and that spec's own parser accepts it, as
// that MCO's does; a spec no layer names is refused.
func TestNodeConfigIgnitionSpec(t *testing.T) {
	in := installConfigInput(t)
	for _, spec := range []string{"3.4.0", "3.5.0"} {
		mc, err := NodeConfig("master", in, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		var head struct {
			Ignition struct{ Version string } `json:"ignition"`
		}
		if err := json.Unmarshal(mc.Spec.Config.Raw, &head); err != nil || head.Ignition.Version != spec {
			t.Errorf("rendered in %s: ignition.version %q (%v)", spec, head.Ignition.Version, err)
		}
		parse := map[string]func([]byte) error{
			"3.4.0": func(raw []byte) error { _, _, err := ign34.Parse(raw); return err },
			"3.5.0": func(raw []byte) error { _, _, err := ign.Parse(raw); return err },
		}[spec]
		if err := parse(mc.Spec.Config.Raw); err != nil {
			t.Errorf("%s's parser refuses its config: %v", spec, err)
		}
	}
	if _, err := NodeConfig("master", in, "3.6.0"); err == nil || !strings.Contains(err.Error(), `ignition spec "3.6.0"`) {
		t.Errorf("3.6.0: %v", err)
	}
}

// TestNodeConfig: the node configuration from an install-config becomes a MachineConfig whose
// Ignition 3.5 writes cluster.yaml (no secret in it) and one 0600 file per password.
func TestNodeConfig(t *testing.T) {
	in := installConfigInput(t)
	in.Files = append(in.Files, clusterconfig.File{Path: clusterconfig.EtcdPodManifest, Data: []byte("kind: Pod\n")})
	mc, err := NodeConfig("master", in, "3.5.0")
	if err != nil {
		t.Fatal(err)
	}
	applied(t, mc)
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

// TestMetricsScrape: the Service without selector, asking the service-ca operator for the
// endpoint's certificate in the Secret the nodes read; its Endpoints at both nodes' addresses on
// the port tnf-metrics.service serves; and a ServiceMonitor that selects the Service and scrapes
// over TLS, checked against the service CA for the Service's DNS name, with Prometheus's own
// token, the monitor accepted by prometheus-operator's CRD; a node without a usable address is
// refused by name.
func TestMetricsScrape(t *testing.T) {
	in := installConfigInput(t)
	svc, endpoints, mon, err := MetricsScrape(in)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector != nil || svc.Spec.ClusterIP != "None" || svc.Spec.Ports[0].Port != metrics.Port {
		t.Errorf("service: %+v", svc.Spec)
	}
	var ips []string
	for _, a := range endpoints.Subsets[0].Addresses {
		ips = append(ips, a.IP+" "+*a.NodeName)
	}
	if !slices.Equal(ips, []string{"192.0.2.11 master-1", "192.0.2.10 master-0"}) || endpoints.Subsets[0].Ports[0].Name != svc.Spec.Ports[0].Name {
		t.Errorf("endpoints: %v, ports %+v", ips, endpoints.Subsets[0].Ports)
	}
	if !reflect.DeepEqual(mon.Spec.Selector.MatchLabels, svc.Labels) || mon.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name {
		t.Errorf("servicemonitor: %+v", mon.Spec)
	}
	if got := svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"]; got != metrics.TLSSecret || len(endpoints.Annotations)+len(mon.Annotations) > 0 {
		t.Errorf("the serving certificate's annotation: service %v, endpoints %v, servicemonitor %v", svc.Annotations, endpoints.Annotations, mon.Annotations)
	}
	ep := mon.Spec.Endpoints[0]
	//lint:ignore SA1019 the file of Prometheus's own token, as MetricsScrape writes it
	if ep.Scheme != "https" || ep.BearerTokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" || ep.TLSConfig == nil ||
		ep.TLSConfig.CAFile != "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt" ||
		ep.TLSConfig.ServerName == nil || *ep.TLSConfig.ServerName != svc.Name+"."+svc.Namespace+".svc" || ep.TLSConfig.InsecureSkipVerify != nil {
		t.Errorf("servicemonitor endpoint: %+v, TLS %+v", ep, ep.TLSConfig)
	}
	applied(t, mon)
	in.Config.Nodes[1].IP = "master-1.example.com"
	if _, _, _, err := MetricsScrape(in); err == nil || !strings.Contains(err.Error(), "nodes[1].ip") {
		t.Errorf("a node named by host name: %v", err)
	}
}

// TestRemovalGuardRules: the policy guards deletes of the named objects only, each kind by its own
// rule with its names sorted; a bad pool or nothing to guard is refused.
func TestRemovalGuardRules(t *testing.T) {
	policy, binding, err := RemovalGuard("master", []string{"99-master-tnf-os-image", "99-master-tnf-node-config"}, []string{"master"})
	if err != nil {
		t.Fatal(err)
	}
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 2 || rules[0].Resources[0] != "machineconfigs" || !slices.Equal(rules[0].ResourceNames, []string{"99-master-tnf-node-config", "99-master-tnf-os-image"}) ||
		rules[1].Resources[0] != "machineosconfigs" || !slices.Equal(rules[1].ResourceNames, []string{"master"}) {
		t.Errorf("rules: %+v", rules)
	}
	for _, r := range rules {
		if len(r.Operations) != 1 || r.Operations[0] != "DELETE" {
			t.Errorf("%v: operations %v, want DELETE only", r.Resources, r.Operations)
		}
	}
	if binding.Spec.PolicyName != policy.Name || policy.Name != "tnf-layer-removal-guard-master" {
		t.Errorf("policy %q, binding to %q", policy.Name, binding.Spec.PolicyName)
	}
	if _, _, err := RemovalGuard("Master!", []string{"x"}, nil); err == nil || !strings.Contains(err.Error(), "--pool") {
		t.Errorf("a bad pool: %v", err)
	}
	if _, _, err := RemovalGuard("master", nil, nil); err == nil {
		t.Error("nothing to guard: no error")
	}
}
