// Package staticpod reads the cluster-etcd-operator's etcd pod manifests: the static pod the
// kubelet runs (whose etcd container is the installer's etcd until the handover takes it out)
// and the external-etcd manifest the podman runtime launches from.
package staticpod

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// EtcdContainer is the name of etcd's container in both manifests.
const EtcdContainer = "etcd"

// KubeletMarker lets cri-o and kubelet start outside Pacemaker (their drop-ins name it beside
// Pacemaker's own): `tnfctl installer-kubelet` writes it at boot on a node whose kubelet runs
// the installer's etcd (nodesetup.BootServices). It is on /run, so a reboot ends it; the
// handover and the etcd agent's launch remove it: from then on only Pacemaker starts them.
const KubeletMarker = "/run/tnf/installer-kubelet"

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
// installer's etcd: it has an etcd container. What cannot be told counts as yes, with the reason
// as err: a manifest that cannot be read or holds no pod (the operator's installer removes the
// file, then writes it anew, so a reader can find it missing, empty or half-written), and a
// missing manifest on a node that holds revisions of the operator's static pod. A node read so
// would start a second etcd on the same data dir. No manifest and no revision: no installer etcd.
func InstallerEtcd(path string) (bool, error) {
	pod, err := Read(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		revisions, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(path)), "static-pod-resources", "etcd-pod-*"))
		if len(revisions) > 0 {
			return true, fmt.Errorf("%s is missing while the operator's static pod has revisions here (%s): it is being rewritten", path, filepath.Base(revisions[0]))
		}
		return false, nil
	case err != nil:
		return true, fmt.Errorf("the static pod manifest: %w", err)
	case len(pod.Spec.Containers) == 0:
		return true, fmt.Errorf("%s holds no pod with containers (being written?)", path)
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
