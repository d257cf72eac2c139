package manifests

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// AllowRemoval is the annotation that lets an object RemovalGuard protects be deleted.
const AllowRemoval = "tnf-layer.io/allow-removal"

// RemovalGuard is a ValidatingAdmissionPolicy and its binding that refuse to delete the objects
// that put the layer on pool's nodes (names, the MachineConfigs and MachineOSConfig build-layer
// writes) unless the object is annotated AllowRemoval=true. After the handover those nodes run
// etcd only through the layer's Pacemaker: without the layer MCO boots them into an OS without
// it, while the operator's static pod has no etcd container any more, and the cluster stops
// (docs/operate.md, "Removing the layer"). An admission policy, not a finalizer: it needs no
// controller, and it answers the admin with why and what to read.
func RemovalGuard(pool string, machineConfigs, machineOSConfigs []string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	if err := checkPool(pool); err != nil {
		return nil, nil, err
	}
	if len(machineConfigs)+len(machineOSConfigs) == 0 {
		return nil, nil, fmt.Errorf("removal guard: no object to guard on pool %s", pool)
	}
	name := "tnf-layer-removal-guard-" + pool
	rule := func(resource string, names []string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{ResourceNames: slices.Sorted(slices.Values(names)),
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"machineconfiguration.openshift.io"}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}
	}
	var rules []admissionregistrationv1.NamedRuleWithOperations
	if len(machineConfigs) > 0 {
		rules = append(rules, rule("machineconfigs", machineConfigs))
	}
	if len(machineOSConfigs) > 0 {
		rules = append(rules, rule("machineosconfigs", machineOSConfigs))
	}
	annotation := "'" + AllowRemoval + "'"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: rules},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "has(oldObject.metadata.annotations) && " + annotation + " in oldObject.metadata.annotations && " +
					"oldObject.metadata.annotations[" + annotation + "] == 'true'",
				MessageExpression: "oldObject.kind + ' ' + oldObject.metadata.name + ' puts the tnf-layer on the " + pool + " nodes, which run etcd " +
					"through its Pacemaker once the handover is done: without it they boot without etcd and the cluster stops. " +
					"Read the layer\\'s docs/operate.md, Removing the layer; to delete it anyway: oc annotate ' + " +
					"oldObject.kind.lowerAscii() + ' ' + oldObject.metadata.name + ' " + AllowRemoval + "=true'",
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	return policy, binding, nil
}
