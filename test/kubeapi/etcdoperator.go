package kubeapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	basepoll "github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"
)

// etcdCRD is the cluster-etcd-operator's Etcd CRD, in the openshift/api module.
const etcdCRD = "operator/v1/zz_generated.crd-manifests/0000_12_etcd_01_etcds-Default.crd.yaml"

// RegisterEtcdOperator makes the API what the cluster-etcd-operator makes it: its Etcd CRD
// (OpenShift's own manifest), the Etcd object "cluster" with EtcdRunningInCluster, and the
// handover's ClusterRole bound to the handover's identity, as an administrator applies it. cfg is
// an administrator's. It returns the Etcd resource. What exists already is kept, so a call that
// failed halfway (an etcd connection the API reset) can be made again.
func RegisterEtcdOperator(ctx context.Context, cfg *rest.Config, handoverIdentity rbacv1.Subject) (dynamic.ResourceInterface, error) {
	if err := createCRD(ctx, cfg, etcdCRD); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	etcds := dyn.Resource(handover.EtcdResource)
	e := operatorv1.Etcd{TypeMeta: metav1.TypeMeta{APIVersion: "operator.openshift.io/v1", Kind: "Etcd"}, ObjectMeta: metav1.ObjectMeta{Name: handover.EtcdName},
		Spec: operatorv1.EtcdSpec{StaticPodOperatorSpec: operatorv1.StaticPodOperatorSpec{OperatorSpec: operatorv1.OperatorSpec{ManagementState: operatorv1.Managed}}}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&e)
	if err != nil {
		return nil, err
	}
	created, err := etcds.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = etcds.Get(ctx, handover.EtcdName, metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedSlice(created.Object, []any{map[string]any{"type": "EtcdRunningInCluster", "status": "True",
		"reason": "EnoughEtcdMembers", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}, "status", "conditions"); err != nil {
		return nil, err
	}
	if _, err := etcds.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, handover.ClusterRole(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: handover.ClusterRoleName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: handover.ClusterRoleName},
		Subjects: []rbacv1.Subject{handoverIdentity}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return etcds, err
}

// createCRD creates the CRD of OpenShift's manifest at path in the openshift/api module and waits
// until it is established.
func createCRD(ctx context.Context, cfg *rest.Config, path string) error {
	dir, err := crdvalidate.OpenShiftAPIDir()
	if err != nil {
		return err
	}
	return CreateCRD(ctx, cfg, filepath.Join(dir, filepath.FromSlash(path)))
}

// CreateCRD creates the CRD of the manifest file and waits until it is established. cfg is an
// administrator's.
func CreateCRD(ctx context.Context, cfg *rest.Config, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return err
	}
	return CreateCRDObject(ctx, cfg, &crd)
}

// CreateCRDObject creates crd and waits until it is established. cfg is an administrator's.
func CreateCRDObject(ctx context.Context, cfg *rest.Config, crd *apiextensionsv1.CustomResourceDefinition) error {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	var last string
	if err := basepoll.Every(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprint(got.Status.Conditions)
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("the CRD %s is not established: %s", crd.Name, last)
	}
	return nil
}

// infrastructureCRD is OpenShift's Infrastructure CRD with the DualReplica topology in its
// enum: in this openshift/api version, the DevPreviewNoUpgrade feature set's.
const infrastructureCRD = "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-DevPreviewNoUpgrade.crd.yaml"

// RegisterInfrastructure makes the API say the control plane's topology as OpenShift's does: the
// Infrastructure CRD and its object "cluster" whose status.controlPlaneTopology is topology.
// cfg is an administrator's.
func RegisterInfrastructure(ctx context.Context, cfg *rest.Config, topology configv1.TopologyMode) error {
	if err := createCRD(ctx, cfg, infrastructureCRD); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	infras := dyn.Resource(nodesetup.InfrastructureResource)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": configv1.GroupVersion.String(), "kind": "Infrastructure",
		"metadata": map[string]any{"name": nodesetup.InfrastructureName}, "spec": map[string]any{}}}
	created, err := infras.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Object["status"] = map[string]any{"controlPlaneTopology": string(topology), "infrastructureTopology": string(configv1.HighlyAvailableTopologyMode)}
	_, err = infras.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// ConditionTrue says whether the Etcd object's condition is True (false when it cannot be read).
func ConditionTrue(etcds dynamic.ResourceInterface, condition string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u, err := etcds.Get(ctx, handover.EtcdName, metav1.GetOptions{})
	if err != nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["type"] == condition && m["status"] == "True" {
			return true
		}
	}
	return false
}

// MachineConfigResource is MCO's MachineConfig, as the dynamic client names it.
var MachineConfigResource = schema.GroupVersionResource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigs"}

// RegisterMachineConfigs makes the API serve MCO's MachineConfigs with OpenShift's own CRD. cfg
// is an administrator's.
func RegisterMachineConfigs(ctx context.Context, cfg *rest.Config) error {
	return createCRD(ctx, cfg, "machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml")
}
