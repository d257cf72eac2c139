// Package staticpod reads the cluster-etcd-operator's etcd pod manifests: the static pod the
// kubelet runs (whose etcd container is the installer's etcd until the handover takes it out)
// and the external-etcd manifest the podman runtime launches from.
package staticpod

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// EtcdContainer is the name of etcd's container in both manifests.
const EtcdContainer = "etcd"

// Read reads a pod manifest: the operator's JSON or a hand-written YAML one (sigs.k8s.io/yaml
// reads both). Errors name the file.
func Read(path string) (corev1.Pod, error) {
	var pod corev1.Pod
	data, err := os.ReadFile(path)
	if err != nil {
		return pod, err
	}
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return pod, fmt.Errorf("%s: %w", path, err)
	}
	return pod, nil
}

// EtcdIndex is the index of etcd's container in spec.containers, or -1.
func EtcdIndex(pod corev1.Pod) int {
	return slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == EtcdContainer })
}

// InstallerEtcd says whether the kubelet's static pod manifest at path still runs the
// installer's etcd: it has an etcd container. No manifest: no installer etcd. A manifest that
// cannot be read is an error, never "no etcd": a node that read it so would start a second
// etcd on the same data dir.
func InstallerEtcd(path string) (bool, error) {
	pod, err := Read(path)
	switch {
	case os.IsNotExist(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("the static pod manifest: %w", err)
	}
	return EtcdIndex(pod) >= 0, nil
}

// DropEtcd rewrites the manifest at path without its etcd container, as the operator's revision
// without it does, atomically and with the file's mode: the kubelet then stops that container.
// The operator writes the manifest as JSON (which the kubelet reads as YAML); so does this.
func DropEtcd(path string) error {
	pod, err := Read(path)
	if err != nil {
		return err
	}
	i := EtcdIndex(pod)
	if i < 0 {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	pod.Spec.Containers = slices.Delete(pod.Spec.Containers, i, i+1)
	data, err := json.Marshal(pod)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, data, info.Mode().Perm())
}
