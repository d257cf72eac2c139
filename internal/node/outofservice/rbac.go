package outofservice

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterRoleName names ClusterRole's role.
const ClusterRoleName = "tnf-out-of-service"

// ClusterRole is all a pass needs of the API: the two nodes' Nodes read and patched (the taint
// and its annotation; no other Node, no update that replaces one whole), VolumeAttachments listed
// (whether the peer's volumes are detached; a list cannot be narrowed by name). Bound to the
// identity of outOfService.kubeconfigFile, it scopes that credential to the taint's work.
func ClusterRole(nodes ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "patch"}, ResourceNames: nodes},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list"}},
		},
	}
}
