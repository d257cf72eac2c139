package handover

import (
	"context"
	"fmt"
	"slices"

	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
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
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
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

func (o *Operator) etcd(ctx context.Context) (*operatorv1.Etcd, error) {
	u, err := o.dyn.Resource(EtcdResource).Get(ctx, EtcdName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var e operatorv1.Etcd
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e); err != nil {
		return nil, fmt.Errorf("etcds/%s: %w", EtcdName, err)
	}
	return &e, nil
}

// Condition says whether the Etcd object's condition of type is True.
func (o *Operator) Condition(ctx context.Context, condition string) (bool, error) {
	e, err := o.etcd(ctx)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(e.Status.Conditions, func(c operatorv1.OperatorCondition) bool { return c.Type == condition })
	return i >= 0 && e.Status.Conditions[i].Status == operatorv1.ConditionTrue, nil
}

// SetTrue sets the Etcd object's condition of type to True, with reason and message, through
// an update of the status at the version read (a conflict with the operator's own writes reads
// again). A condition already True is left as it is.
func (o *Operator) SetTrue(ctx context.Context, condition, reason, message string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		e, err := o.etcd(ctx)
		if err != nil {
			return err
		}
		c := operatorv1.OperatorCondition{Type: condition, Status: operatorv1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
		switch i := slices.IndexFunc(e.Status.Conditions, func(c operatorv1.OperatorCondition) bool { return c.Type == condition }); {
		case i < 0:
			e.Status.Conditions = append(e.Status.Conditions, c)
		case e.Status.Conditions[i].Status == operatorv1.ConditionTrue:
			return nil
		default:
			e.Status.Conditions[i] = c
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
		if err != nil {
			return err
		}
		_, err = o.dyn.Resource(EtcdResource).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{})
		return err
	})
}
