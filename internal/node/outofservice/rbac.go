package outofservice

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterRoleName names the role of both nodes (ClusterRole), for a credential outOfService.
// kubeconfigFile names.
const ClusterRoleName = "tnf-out-of-service"

// NodeClusterRoleName names the role of the node's own credential, which taints only its peer.
func NodeClusterRoleName(node string) string { return ClusterRoleName + "-" + node }

// ClusterRole, named name, is all a pass needs of the API: the nodes' Nodes read and patched
// (the taint and its annotation; no other Node, no update that replaces one whole),
// VolumeAttachments listed (whether the peer's volumes are detached; a list cannot be narrowed
// by name). Bound to a credential, it scopes that credential to the taint's work: a node's own
// (NodeClusterRoleName) names the peer alone, since a node only taints its peer.
func ClusterRole(name string, nodes ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "patch"}, ResourceNames: nodes},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list"}},
		},
	}
}
