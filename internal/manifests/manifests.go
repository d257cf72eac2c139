// Package manifests writes what puts the layer on a cluster: a MachineOSConfig for on-cluster
// layering, the out-of-cluster alternative (a MachineConfig with osImageURL), and the node
// configuration MachineConfig (cluster.yaml and the BMC secrets) through butane's openshift
// variant, validated as Ignition 3.5. Secrets only ever go into that MachineConfig.
package manifests

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/containerfile"
)

// Limits of the MachineOSConfig API (openshift/api machineconfiguration/v1).
const (
	MaxContainerfile = 4096
	MaxPushSpec      = 447
)

var mcfgTypeMeta = func(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: kind}
}

// pushSpec is a pull spec with a registry host that has a dot (or a port) and a tag, as the API
// requires.
var pushSpec = regexp.MustCompile(`^[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+(:[0-9]+)?/[a-z0-9._/-]+:[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// Layer is the pushed layer image and what it carries.
type Layer struct {
	Image string   // digest-pinned pull spec of the pushed layer
	Paths []string // directories or files the layer adds, copied into the on-cluster build
	// Packages are installed in the on-cluster build from the RPM repository of the release's
	// rhel-coreos-extensions image (Extensions, digest-pinned).
	Packages   []string
	Extensions string
	// Enable are the units the build enables: the copied files bring no links with them.
	Enable []string
	// Finalize is the layer's last step (bootc container lint, or ostree container commit).
	Finalize string
}

var containerfileTemplate = template.Must(template.New("mosc").Funcs(template.FuncMap{
	"dnfFromExtensions": containerfile.DNFFromExtensions, "join": strings.Join,
}).Parse(`FROM {{.Image}} AS payload
{{- if .Packages}}
FROM {{.Extensions}} AS extensions
{{- end}}
FROM configs AS final
{{- range .Paths}}
COPY --from=payload {{.}} {{.}}
{{- end}}
{{- if .Packages}}
{{dnfFromExtensions "extensions" .Packages}}
{{- end}}
RUN systemctl enable {{join .Enable " "}}
{{- if .Finalize}}
RUN {{.Finalize}}
{{- end}}
`))

// Containerfile is the on-cluster build's user content: our files copied from the pushed layer
// by digest, our packages installed from the release's extensions, our units enabled. The MCO builds it after its
// own "configs" stage; the last FROM must be "FROM configs AS final".
func Containerfile(l Layer) (string, error) {
	if !containerfile.Pinned(l.Image) {
		return "", fmt.Errorf("layer image %q is not pinned by digest", l.Image)
	}
	if len(l.Packages) > 0 && !containerfile.Pinned(l.Extensions) {
		return "", fmt.Errorf("extensions image %q is not pinned by digest", l.Extensions)
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
	Pool                string
	PushSpec            string
	PushSecret          string
	BaseImagePullSecret string // optional
}

// MachineOSConfig builds the on-cluster layering object for the pool.
func MachineOSConfig(in MachineOSConfigInput, content string) (*mcfgv1.MachineOSConfig, error) {
	switch {
	case in.Pool == "":
		return nil, fmt.Errorf("--pool: missing")
	case len(in.PushSpec) > MaxPushSpec || !pushSpec.MatchString(in.PushSpec):
		return nil, fmt.Errorf("--push-spec: %q must be host.with.dot[:port]/path:tag, at most %d characters", in.PushSpec, MaxPushSpec)
	case in.PushSecret == "":
		return nil, fmt.Errorf("--push-secret: missing")
	}
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
	return m, nil
}

func roleLabels(pool string) map[string]string {
	return map[string]string{"machineconfiguration.openshift.io/role": pool}
}

// OSImageURL is the out-of-cluster alternative: the pool boots the pushed layer as it is.
func OSImageURL(pool, image string) (*mcfgv1.MachineConfig, error) {
	if !containerfile.Pinned(image) {
		return nil, fmt.Errorf("osImageURL %q is not pinned by digest", image)
	}
	return &mcfgv1.MachineConfig{
		TypeMeta:   mcfgTypeMeta("MachineConfig"),
		ObjectMeta: metav1.ObjectMeta{Name: "99-" + pool + "-tnf-os-image", Labels: roleLabels(pool)},
		Spec:       mcfgv1.MachineConfigSpec{OSImageURL: image},
	}, nil
}

// Marshal renders an object as YAML.
func Marshal(obj any) ([]byte, error) { return yaml.Marshal(obj) }
