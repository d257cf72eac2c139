//go:build integration

package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/tnf-layer/tnf-layer/internal/build/manifests"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// TestRemovalGuard: with the removal guard build-layer writes applied to the real kube-apiserver
// (its ValidatingAdmissionPolicy and binding), deleting the MachineConfig that puts the layer on
// the nodes is refused with the reason and the way round it, and nothing is deleted; another
// MachineConfig deletes as before; annotated with tnf-layer.io/allow-removal=true, the guarded
// one deletes.
func TestRemovalGuard(t *testing.T) {
	t.Parallel()
	api := startLoneAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := api.Client("admin")
	if err := kubeapi.RegisterMachineConfigs(ctx, api.Config("admin")); err != nil {
		t.Fatal(err)
	}
	const guarded = "99-master-tnf-os-image"
	policy, binding, err := manifests.RemovalGuard("master", []string{guarded, "99-master-tnf-node-config"}, []string{"master"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(api.Config("admin"))
	if err != nil {
		t.Fatal(err)
	}
	mcs := dyn.Resource(kubeapi.MachineConfigResource)
	for _, name := range []string{guarded, "99-master-other"} {
		mc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"machineconfiguration.openshift.io/role": "master"}},
			"spec":     map[string]any{"osImageURL": "registry.example.com/tnf/os-image@sha256:" + strings.Repeat("ab", 32)}}}
		if _, err := mcs.Create(ctx, mc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The policy takes effect once the API has compiled it: asked with dry runs, which go through
	// admission and delete nothing.
	var refusal error
	poll.Until(t, "the removal guard in effect", time.Minute, 200*time.Millisecond, func() (bool, string) {
		refusal = mcs.Delete(ctx, guarded, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return refusal != nil, "the dry-run delete went through"
	})
	err = mcs.Delete(ctx, guarded, metav1.DeleteOptions{})
	t.Logf("deleting %s: %v", guarded, err)
	for _, want := range []string{"MachineConfig 99-master-tnf-os-image puts the tnf-layer on the master nodes",
		"Removing the layer", "oc annotate machineconfig 99-master-tnf-os-image tnf-layer.io/allow-removal=true"} {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("deleting %s: %v; want forbidden, saying %q", guarded, err, want)
		}
	}
	if _, err := mcs.Get(ctx, guarded, metav1.GetOptions{}); err != nil {
		t.Fatalf("%s after the refused delete: %v", guarded, err)
	}
	if err := mcs.Delete(ctx, "99-master-other", metav1.DeleteOptions{}); err != nil {
		t.Errorf("another MachineConfig: %v", err)
	}
	mc, err := mcs.Get(ctx, guarded, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mc.SetAnnotations(map[string]string{manifests.AllowRemoval: "true"})
	if _, err := mcs.Update(ctx, mc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := mcs.Delete(ctx, guarded, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting %s annotated %s=true: %v", guarded, manifests.AllowRemoval, err)
	}
}
