package restore

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestNamespaceUID: the kube-system namespace as kube-apiserver stores it (protobuf, its
// default for built-in types; JSON where a cluster stores JSON) gives its UID; anything else is
// an error, never an identity.
func TestNamespaceUID(t *testing.T) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "0b6a3c1e-5f2d-4c8e-9a7b-1d2e3f4a5b6c"}}
	var stored bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(ns, &stored); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"protobuf": stored.Bytes(),
		"json":     []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system","uid":"0b6a3c1e-5f2d-4c8e-9a7b-1d2e3f4a5b6c"}}`),
	} {
		if uid, err := NamespaceUID(data); err != nil || uid != string(ns.UID) {
			t.Errorf("%s: %q, %v", name, uid, err)
		}
	}
	for name, data := range map[string][]byte{
		"a ConfigMap": []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kube-system","uid":"x"}}`),
		"no object":   []byte("k8s\x00garbage"),
	} {
		if uid, err := NamespaceUID(data); err == nil {
			t.Errorf("%s: read as %q", name, uid)
		}
	}
}

// TestHandoverOf: the Etcd object's conditions, as the cluster-etcd-operator and the handover
// write them: the handover completed only with ExternalEtcdHasCompletedTransition True.
func TestHandoverOf(t *testing.T) {
	for obj, want := range map[string]Handover{
		`{"kind":"Etcd","status":{"conditions":[{"type":"ExternalEtcdReadyForTransition","status":"True"},{"type":"ExternalEtcdHasCompletedTransition","status":"True"}]}}`: HandoverCompleted,
		`{"kind":"Etcd","status":{"conditions":[{"type":"ExternalEtcdReadyForTransition","status":"True"}]}}`:                                                               HandoverNotCompleted,
		`{"kind":"Etcd","status":{"conditions":[{"type":"ExternalEtcdHasCompletedTransition","status":"False"}]}}`:                                                          HandoverNotCompleted,
		`{"kind":"Etcd","spec":{"managementState":"Managed"}}`:                                                                                                              HandoverNotCompleted,
	} {
		if got, err := handoverOf([]byte(obj)); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", obj, got, err, want)
		}
	}
	if _, err := handoverOf([]byte("{")); err == nil {
		t.Error("a torn object read as an Etcd object")
	}
}
