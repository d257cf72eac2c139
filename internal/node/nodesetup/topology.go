package nodesetup

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
)

// InfrastructureResource is OpenShift's Infrastructure, whose object "cluster" says the control
// plane's topology. The node's credential may get that object only (build-layer's manifests).
var InfrastructureResource = schema.GroupVersionResource{Group: configv1.GroupName, Version: "v1", Resource: "infrastructures"}

// InfrastructureName is the one Infrastructure object.
const InfrastructureName = "cluster"

// dualReplica says why the Infrastructure object makes this node a guest ("" when it does not):
// a DualReplica control plane is one whose cluster-etcd-operator configures Pacemaker with its
// own jobs, even before they have run (a layer that arrives with the installation). An API
// without that object (not OpenShift's, or the own mode's stand-in) says nothing. What cannot be
// read is an error, never "not DualReplica".
func dualReplica(ctx context.Context, kubeconfigPath string) (string, error) {
	cfg, err := kubeconfig.Load(kubeconfigPath, "tnf-setup", 0)
	if err != nil {
		return "", fmt.Errorf("secretsFromAPI.kubeconfigFile: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	obj, err := client.Resource(InfrastructureResource).Get(ctx, InfrastructureName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("the Infrastructure object %q (its control plane's topology): %w", InfrastructureName, err)
	}
	var infra configv1.Infrastructure
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &infra); err != nil {
		return "", fmt.Errorf("the Infrastructure object %q: %w", InfrastructureName, err)
	}
	if infra.Status.ControlPlaneTopology != configv1.DualReplicaTopologyMode {
		return "", nil
	}
	return "the Infrastructure object says controlPlaneTopology DualReplica: the cluster-etcd-operator's two-node jobs configure Pacemaker on this cluster", nil
}

// topologyGuest is dualReplica once the API answers, waiting up to wait for it: a node never set
// up does not set up its own cluster before it knows. A credential the API refuses (the topology
// reader's binding not applied) stops it at once.
func topologyGuest(ctx context.Context, wait time.Duration, kubeconfigPath string, step func(string, string)) (string, error) {
	var why string
	api := apiWait{name: "topology", step: step}
	err := waitFor(ctx, wait, "the control plane's topology from the API (with "+kubeconfigPath+")", func(ctx context.Context) (bool, error) {
		w, err := dualReplica(ctx, kubeconfigPath)
		if err != nil {
			return api.failed(err)
		}
		why = w
		return true, nil
	})
	return why, api.result(err)
}
