//go:build integration

package restore

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testetcd"
)

// TestSnapshotObjects: a snapshot etcdctl took of a real etcd holding what kube-apiserver stores
// for the kube-system namespace (protobuf) and the operator's Etcd object (JSON) from before the
// handover: the restore reads the namespace's UID and that the handover had not completed; the
// newest version counts (the object updated once completed, then the namespace deleted).
func TestSnapshotObjects(t *testing.T) {
	dir := t.TempDir()
	cli, endpoint := testetcd.Start(t, filepath.Join(dir, "data"), "master-0", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ns bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-1"}}, &ns); err != nil {
		t.Fatal(err)
	}
	notCompleted := `{"apiVersion":"operator.openshift.io/v1","kind":"Etcd","status":{"conditions":[{"type":"ExternalEtcdReadyForTransition","status":"True"}]}}`
	completed := `{"apiVersion":"operator.openshift.io/v1","kind":"Etcd","status":{"conditions":[{"type":"ExternalEtcdHasCompletedTransition","status":"True"}]}}`
	snapshot := func(name string) etcddata.Snapshot {
		file := filepath.Join(dir, name)
		testetcd.Snapshot(t, endpoint, file)
		s, err := etcddata.ReadSnapshot(file)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, kv := range [][2]string{{KubeSystemKey, ns.String()}, {EtcdObjectKey, notCompleted}} {
		if _, err := cli.Put(ctx, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if id, h, err := SnapshotObjects(snapshot("before.db")); err != nil || id != "uid-1" || h != HandoverNotCompleted {
		t.Errorf("before the handover: %q, %v, %v", id, h, err)
	}
	if _, err := cli.Put(ctx, EtcdObjectKey, completed); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Delete(ctx, KubeSystemKey); err != nil {
		t.Fatal(err)
	}
	if id, h, err := SnapshotObjects(snapshot("after.db")); err != nil || id != "" || h != HandoverCompleted {
		t.Errorf("after the handover, the namespace deleted: %q, %v, %v", id, h, err)
	}
}
