// Package manifests writes what puts the layer on a cluster, for one rollout at a time: on-cluster
// (a MachineOSConfig adding our files, and the MachineConfig naming the release's extension for
// the packages) or out-of-cluster (a MachineConfig with the layer as osImageURL); with either,
// the node configuration MachineConfig (cluster.yaml and the BMC secrets) through butane's
// openshift variant, validated as Ignition 3.5, and the MachineConfiguration whose node
// disruption policy applies its changes without a reboot. Secrets only ever go into the node
// configuration.
package manifests

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/build/containerfile"
)

// Limits of the MachineOSConfig API (openshift/api machineconfiguration/v1).
const (
	MaxContainerfile = 4096
	MaxPushSpec      = 447
)

var mcfgTypeMeta = func(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: kind}
}

// The MachineOSConfig CRD's CEL rules for renderedImagePushSpec (openshift/api release-4.19,
// machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosconfigs.crd.yaml),
// verbatim: CEL's matches() is RE2 like Go's regexp. The CRD's validators are not linked into
// build-layer (they need the CRD file and the apiserver); the manifests tests run them on the
// same inputs and check that both agree.
var pushSpecRules = []*regexp.Regexp{
	regexp.MustCompile(`^([a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+(:[0-9]{2,5})?(/[a-zA-Z0-9-_]{1,61})*/[a-zA-Z0-9-_.]+:[a-zA-Z0-9._-]+$`),
	regexp.MustCompile(`^[^.]+\.[^.]+\.svc:\d+\/[^\/]+\/[^\/]+:[^\/]+$`),
}

// Layer is the pushed layer image and what the on-cluster build takes from it.
type Layer struct {
	Image string   // digest-pinned pull spec of the pushed layer
	Paths []string // directories or files the layer adds, copied into the on-cluster build
	// Enable are the units the build enables: the copied files bring no links with them.
	Enable []string
	// Finalize is the layer's last step (bootc container lint, or ostree container commit).
	Finalize string
}

var containerfileTemplate = template.Must(template.New("mosc").Funcs(template.FuncMap{
	"join": strings.Join, "removeClusterKeys": func() string { return containerfile.RemoveClusterKeys },
}).Parse(`FROM {{.Image}} AS payload
FROM configs AS final
{{- range .Paths}}
COPY --from=payload {{.}} {{.}}
{{- end}}
RUN {{removeClusterKeys}} && systemctl enable {{join .Enable " "}}
{{- if .Finalize}}
RUN {{.Finalize}}
{{- end}}
`))

// Containerfile is the on-cluster build's user content: our files copied from the pushed layer
// by digest and our units enabled. No package is installed here: the packages come from the
// running release's two-node-ha extension (Extensions), which MCO installs in its own "configs"
// stage, so they follow every upgrade; the MachineOSConfig outlives the release it was written
// for. A key the packages' scripts may have generated there is removed from the nodes' tree
// (tnfctl setup installs the cluster's own); it stays in MCO's layer, of an image built for this
// cluster only. MCO builds the content after "configs"; the last FROM must be "FROM configs AS final".
func Containerfile(l Layer) (string, error) {
	if !containerfile.Pinned(l.Image) {
		return "", fmt.Errorf("layer image %q is not pinned by digest", l.Image)
	}
	if len(l.Enable) == 0 {
		return "", fmt.Errorf("no unit to enable: the nodes would start nothing of the layer")
	}
	var b bytes.Buffer
	if err := containerfileTemplate.Execute(&b, l); err != nil {
		return "", err
	}
	s := b.String()
	if len(s) > MaxContainerfile {
		return "", fmt.Errorf("MachineOSConfig spec.containerFile[0].content: %d characters, the API allows %d", len(s), MaxContainerfile)
	}
	return s, nil
}

// MachineOSConfigInput names the pool and where the MCO pushes the image it builds.
type MachineOSConfigInput struct {
	Pool       string
	PushSpec   string
	PushSecret string
	// BaseImagePullSecret pulls the base and the content's images (our layer); without it MCO
	// uses the cluster's global pull secret.
	BaseImagePullSecret string
}

// checkName refuses what the CRDs' dns1123Subdomain rules refuse, naming the flag and the field.
func checkName(flag, name string) error {
	if name == "" {
		return fmt.Errorf("%s: missing", flag)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s: %q: %s", flag, name, strings.Join(errs, "; "))
	}
	return nil
}

// checkPool refuses a machine config pool name the API would refuse.
func checkPool(pool string) error { return checkName("--pool (spec.machineConfigPool.name)", pool) }

func (in MachineOSConfigInput) check() error {
	if err := checkPool(in.Pool); err != nil {
		return err
	}
	if len(in.PushSpec) > MaxPushSpec || !slices.ContainsFunc(pushSpecRules, func(r *regexp.Regexp) bool { return r.MatchString(in.PushSpec) }) {
		return fmt.Errorf("--push-spec (spec.renderedImagePushSpec): %q must be host.with.dot[:port of 2–5 digits][/namespace without dots]/name:tag "+
			"or service.namespace.svc:port/namespace/name:tag, at most %d characters", in.PushSpec, MaxPushSpec)
	}
	if err := checkName("--push-secret (spec.renderedImagePushSecret.name)", in.PushSecret); err != nil {
		return err
	}
	if in.BaseImagePullSecret != "" {
		return checkName("--base-image-pull-secret (spec.baseImagePullSecret.name)", in.BaseImagePullSecret)
	}
	return nil
}

// MachineOSConfig builds the on-cluster layering object for the pool, refusing what the API
// would refuse with the flag named.
func MachineOSConfig(in MachineOSConfigInput, content string) (*mcfgv1.MachineOSConfig, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	return in.object(content), nil
}

func (in MachineOSConfigInput) object(content string) *mcfgv1.MachineOSConfig {
	m := &mcfgv1.MachineOSConfig{
		TypeMeta:   mcfgTypeMeta("MachineOSConfig"),
		ObjectMeta: metav1.ObjectMeta{Name: in.Pool}, // the API requires the pool's name
		Spec: mcfgv1.MachineOSConfigSpec{
			MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: in.Pool},
			ImageBuilder:            mcfgv1.MachineOSImageBuilder{ImageBuilderType: mcfgv1.JobBuilder},
			RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: in.PushSecret},
			RenderedImagePushSpec:   mcfgv1.ImageTagFormat(in.PushSpec),
			Containerfile:           []mcfgv1.MachineOSContainerfile{{ContainerfileArch: mcfgv1.NoArch, Content: content}},
		},
	}
	if in.BaseImagePullSecret != "" {
		m.Spec.BaseImagePullSecret = &mcfgv1.ImageSecretObjectReference{Name: in.BaseImagePullSecret}
	}
	return m
}

// Extensions is the MachineConfig that installs the release's extension on the pool: MCO
// installs it from the running release's rhel-coreos-extensions image, in the on-cluster build's
// "configs" stage (machine-config-operator, Containerfile.on-cluster-build-template), so after an
// upgrade the packages are the new release's.
func Extensions(pool, extension string) (*mcfgv1.MachineConfig, error) {
	if err := checkPool(pool); err != nil {
		return nil, err
	}
	return &mcfgv1.MachineConfig{
		TypeMeta:   mcfgTypeMeta("MachineConfig"),
		ObjectMeta: metav1.ObjectMeta{Name: "99-" + pool + "-tnf-extensions", Labels: roleLabels(pool)},
		Spec:       mcfgv1.MachineConfigSpec{Extensions: []string{extension}},
	}, nil
}

func roleLabels(pool string) map[string]string {
	return map[string]string{"machineconfiguration.openshift.io/role": pool}
}

// OSImageURL is the out-of-cluster rollout: the pool boots the pushed layer as it is.
func OSImageURL(pool, image string) (*mcfgv1.MachineConfig, error) {
	if err := checkPool(pool); err != nil {
		return nil, err
	}
	if !containerfile.Pinned(image) {
		return nil, fmt.Errorf("osImageURL %q is not pinned by digest", image)
	}
	return &mcfgv1.MachineConfig{
		TypeMeta:   mcfgTypeMeta("MachineConfig"),
		ObjectMeta: metav1.ObjectMeta{Name: "99-" + pool + "-tnf-os-image", Labels: roleLabels(pool)},
		Spec:       mcfgv1.MachineConfigSpec{OSImageURL: image},
	}, nil
}

// Marshal renders an object as YAML (a MachineConfiguration without its unset fields).
func Marshal(obj any) ([]byte, error) {
	if mc, ok := obj.(*operatorv1.MachineConfiguration); ok {
		v, err := withoutUnset(mc)
		if err != nil {
			return nil, err
		}
		return yaml.Marshal(v)
	}
	return yaml.Marshal(obj)
}
