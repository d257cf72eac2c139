package restore

import (
	"encoding/json"
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
)

// Keys of the API objects the restore reads, under the API server's storage prefix
// (kube-apiserver's --etcd-prefix, "kubernetes.io" on OpenShift).
const (
	// KubeSystemKey is the kube-system namespace, whose UID a cluster keeps for its life: the
	// identity a snapshot of another cluster does not share.
	KubeSystemKey = "/kubernetes.io/namespaces/kube-system"
	// EtcdObjectKey is the cluster-etcd-operator's Etcd object, whose conditions say whether the
	// handover from the installer's etcd completed.
	EtcdObjectKey = "/kubernetes.io/operator.openshift.io/etcds/cluster"
)

// SnapshotObjects reads what the snapshot says of the cluster: its identity ("" without a
// kube-system namespace) and the handover as its Etcd object records it.
func SnapshotObjects(s etcddata.Snapshot) (identity string, h Handover, err error) {
	values, err := etcddata.SnapshotValues(s.Path, KubeSystemKey, EtcdObjectKey)
	if err != nil {
		return "", 0, err
	}
	if v, ok := values[KubeSystemKey]; ok {
		if identity, err = NamespaceUID(v); err != nil {
			return "", 0, fmt.Errorf("%s: %s: %w", s.Path, KubeSystemKey, err)
		}
	}
	if v, ok := values[EtcdObjectKey]; ok {
		if h, err = handoverOf(v); err != nil {
			return "", 0, fmt.Errorf("%s: %s: %w", s.Path, EtcdObjectKey, err)
		}
	}
	return identity, h, nil
}

// NamespaceUID reads the UID of a Namespace as the API server stores it (protobuf, or JSON).
func NamespaceUID(data []byte) (string, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, &corev1.Namespace{})
	if err != nil {
		return "", err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return "", fmt.Errorf("a %T, not a Namespace", obj)
	}
	return string(ns.UID), nil
}

// handoverOf reads an Etcd object (custom resources are stored as JSON).
func handoverOf(data []byte) (Handover, error) {
	var etcd operatorv1.Etcd
	if err := json.Unmarshal(data, &etcd); err != nil {
		return 0, err
	}
	for _, c := range etcd.Status.Conditions {
		if c.Type == handover.ConditionCompleted && c.Status == operatorv1.ConditionTrue {
			return HandoverCompleted, nil
		}
	}
	return HandoverNotCompleted, nil
}
