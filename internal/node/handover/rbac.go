package handover

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterRoleName is the handover credential's only role.
const ClusterRoleName = "tnf-handover"

// The ServiceAccount install.md has an administrator bind to the role and take the handover's
// token of (oc create token).
const (
	ServiceAccountNamespace = "openshift-etcd-operator"
	ServiceAccountName      = "tnf-handover"
)

// ClusterRole is all the handover may do through the API: read the operator's Etcd object and
// set conditions in its status (the object is cluster-scoped, so the role is too). The API's
// readiness check needs no role.
func ClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{EtcdResource.Group}, Resources: []string{"etcds"}, ResourceNames: []string{EtcdName}, Verbs: []string{"get"}},
			{APIGroups: []string{EtcdResource.Group}, Resources: []string{"etcds/status"}, ResourceNames: []string{EtcdName}, Verbs: []string{"get", "update"}},
		},
	}
}
