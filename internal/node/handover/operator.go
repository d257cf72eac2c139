package handover

import (
	"context"
	"fmt"
	"slices"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
)

// The operator's handshake, as the cluster-etcd-operator reads it (pkg/operator/ceohelpers,
// external_etcd_status.go): conditions in the status of etcds.operator.openshift.io "cluster".
// ReadyForTransition makes it render the static pod without the etcd container and roll that
// revision out; CompletedTransition makes it stop managing the membership. It never sets
// either back.
const (
	ConditionReady     = "ExternalEtcdReadyForTransition"
	ReasonReady        = "PacemakerConfiguredForEtcdTransition"
	ConditionCompleted = "ExternalEtcdHasCompletedTransition"
	ReasonCompleted    = "PacemakerResourceAgentIsNowRunningEtcd"
	// EtcdName is the operator's one Etcd object.
	EtcdName = "cluster"
)

// EtcdResource is the operator's Etcd custom resource.
var EtcdResource = schema.GroupVersionResource{Group: operatorv1.GroupName, Version: "v1", Resource: "etcds"}

// Operator is what the handover reads and changes through the API.
type Operator struct {
	dyn dynamic.Interface
	cs  kubernetes.Interface
}

// NewOperator connects with the kubeconfig at path.
func NewOperator(path string) (*Operator, error) {
	cfg, err := kubeconfig.Load(path, "tnf-handover", 0)
	if err != nil {
		return nil, fmt.Errorf("the handover's kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Operator{dyn: dyn, cs: cs}, nil
}

// Ready says whether the API server answers its readiness check.
func (o *Operator) Ready(ctx context.Context) error {
	_, err := o.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// SetTrue sets the Etcd object's condition of type to True, with reason and message, through
// an update of the status at the version read (a conflict with the operator's own writes reads
// again). The object is edited as it was read, so status fields newer than the API types this
// layer pins survive. A condition already True is left as it is.
func (o *Operator) SetTrue(ctx context.Context, condition, reason, message string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := o.dyn.Resource(EtcdResource).Get(ctx, EtcdName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
		if err != nil {
			return fmt.Errorf("etcds/%s: status.conditions: %w", EtcdName, err)
		}
		c := map[string]any{"type": condition, "status": string(operatorv1.ConditionTrue), "reason": reason, "message": message,
			"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
		i := slices.IndexFunc(conds, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == condition })
		switch {
		case i < 0:
			conds = append(conds, c)
		case conds[i].(map[string]any)["status"] == c["status"]:
			return nil
		default:
			conds[i] = c
		}
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			return err
		}
		_, err = o.dyn.Resource(EtcdResource).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
}
