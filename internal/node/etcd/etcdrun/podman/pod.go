package podman

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
)

// Pod is what the agent takes from the etcd container of the external-etcd static pod manifest.
// The cluster-etcd-operator renders that manifest from bindata/etcd/pod.gotpl.yaml
// (pkg/operator/externaletcdsupportcontroller keeps only the etcd container and writes it as
// JSON); its installer fills in REVISION, NODE_NAME and NODE_ENVVAR_NAME.
type Pod struct {
	Manifest string
	Image    string
	Env      []corev1.EnvVar // the ones with a plain value
	Mounts   []Mount
	// Flags are the flags of the etcd command in the container's script, in order, with the
	// script's variables expanded from Env.
	Flags []Flag
}

// Mount is a host folder the container sees.
type Mount struct {
	Host, Container string
	ReadOnly        bool
}

// Flag is one --name=value, or a bare --name, of etcd's command line.
type Flag struct {
	Name, Value string
	Bare        bool
}

func (f Flag) String() string {
	if f.Bare {
		return "--" + f.Name
	}
	return "--" + f.Name + "=" + f.Value
}

// revisionFolder is the operator's per-revision resource folder
// (/etc/kubernetes/static-pod-resources/etcd-pod-<N>, the volume "resource-dir"): its pruner
// removes old revisions, and podman refuses a mount whose source is gone. etcd reads nothing
// from it (only the pod's init container copies scripts out of it).
var revisionFolder = regexp.MustCompile(`^etcd-pod-[0-9]+$`)

// LoadPod reads the manifest at path. Errors name the file and the field.
func LoadPod(path string) (Pod, error) {
	pod, err := staticpod.Read(path)
	if err != nil {
		return Pod{}, err
	}
	i := staticpod.EtcdIndex(pod)
	if i < 0 {
		return Pod{}, fmt.Errorf("%s: spec.containers has no container named %s", path, staticpod.EtcdContainer)
	}
	c := pod.Spec.Containers[i]
	field := fmt.Sprintf("spec.containers[%d]", i)
	if c.Image == "" {
		return Pod{}, fmt.Errorf("%s: %s.image is empty", path, field)
	}
	p := Pod{Manifest: path, Image: c.Image}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			p.Env = append(p.Env, e)
		}
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = filepath.Clean(v.HostPath.Path)
		}
	}
	for _, m := range c.VolumeMounts {
		// Not a host folder (the operator's emptyDir /tmp): the container's own file system
		// serves, as etcd runs with a writable root here.
		host, ok := hostPaths[m.Name]
		if !ok || revisionFolder.MatchString(filepath.Base(host)) {
			continue
		}
		p.Mounts = append(p.Mounts, Mount{Host: host, Container: filepath.Clean(m.MountPath), ReadOnly: m.ReadOnly})
	}
	if p.Flags, err = etcdFlags(c.Command, p.Env); err != nil {
		return Pod{}, fmt.Errorf("%s: %s.command: %w", path, field, err)
	}
	return p, nil
}

// etcdFlags reads the flags of the etcd command in the container's script (`exec … etcd \
// --flag=value \ …`); a container without a script has none.
func etcdFlags(command []string, env []corev1.EnvVar) ([]Flag, error) {
	if len(command) == 0 {
		return nil, nil
	}
	words := strings.Fields(strings.ReplaceAll(command[len(command)-1], "\\\n", " "))
	start := -1
	for i, w := range words {
		if w == "etcd" && i+1 < len(words) && strings.HasPrefix(words[i+1], "--") {
			start = i + 1
		}
	}
	if start < 0 {
		return nil, nil
	}
	values := map[string]string{}
	for _, e := range env {
		values[e.Name] = e.Value
	}
	var flags []Flag
	for _, w := range words[start:] {
		if !strings.HasPrefix(w, "--") {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		var missing []string
		value = os.Expand(value, func(v string) string {
			s, ok := values[v]
			if !ok {
				missing = append(missing, v)
			}
			return s
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("etcd's --%s: %s is not in the container's env", name, strings.Join(missing, ", "))
		}
		flags = append(flags, Flag{Name: name, Value: value, Bare: !hasValue})
	}
	return flags, nil
}

func (p Pod) flag(name string) string {
	for _, f := range p.Flags {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// HostPath is the host path of what the container sees at path.
func (p Pod) HostPath(container string) (string, bool) {
	return mapPath(p.Mounts, container, func(m Mount) (string, string) { return m.Container, m.Host })
}

// mapPath maps path through the mount whose from side holds it, the deepest one first, as
// the container's mount table does.
func mapPath(mounts []Mount, path string, sides func(Mount) (from, to string)) (string, bool) {
	path = filepath.Clean(path)
	best, found := -1, ""
	for _, m := range mounts {
		from, to := sides(m)
		rel, err := filepath.Rel(from, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || len(from) <= best {
			continue
		}
		best, found = len(from), filepath.Join(to, rel)
	}
	return found, best >= 0
}

// TLS is the certificates of the operator's etcd command (its --cert-file, --peer-cert-file…
// flags, paths in the container), as host paths; nil when the command sets none.
func (p Pod) TLS() (*etcdrun.TLS, error) {
	t := etcdrun.TLS{}
	fields := []struct {
		flag string
		dst  *string
	}{
		{"cert-file", &t.CertFile}, {"key-file", &t.KeyFile}, {"trusted-ca-file", &t.TrustedCAFile},
		{"peer-cert-file", &t.PeerCertFile}, {"peer-key-file", &t.PeerKeyFile}, {"peer-trusted-ca-file", &t.PeerTrustedCAFile},
	}
	set := 0
	for _, f := range fields {
		v := p.flag(f.flag)
		if v == "" {
			continue
		}
		host, ok := p.HostPath(v)
		if !ok {
			return nil, fmt.Errorf("%s: etcd's --%s %s is in no host folder the container mounts", p.Manifest, f.flag, v)
		}
		if _, err := os.Stat(host); err != nil {
			return nil, fmt.Errorf("%s: etcd's --%s: %w", p.Manifest, f.flag, err)
		}
		*f.dst, set = host, set+1
	}
	switch set {
	case 0:
		return nil, nil
	case len(fields):
		return &t, nil
	}
	return nil, fmt.Errorf("%s: etcd's command sets %d of the 6 TLS files (--cert-file, --key-file, --trusted-ca-file and their --peer- twins)", p.Manifest, set)
}

// ConfigTLS gives an agent configuration of the podman runtime without TLS parameters the
// certificates of the pod manifest's etcd command (the operator's layout: one certificate per
// node, named after it), as host paths, for the agent and for the tools beside it that talk to
// its etcd. A manifest whose etcd has none is refused like runtime exec without them.
func ConfigTLS(c *etcdnode.Config) error {
	if c.Runtime != "podman" || c.TLS != nil {
		return nil
	}
	pod, err := LoadPod(c.PodManifest)
	if err != nil {
		return err
	}
	if c.TLS, err = pod.TLS(); err != nil {
		return err
	}
	return c.CheckPlaintext()
}
