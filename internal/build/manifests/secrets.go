package manifests

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ign "github.com/coreos/ignition/v2/config/v3_5"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/outofservice"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemakercluster"
)

// SecretsRoleName names a node's Role (and its binding): the Secrets its ServiceAccount may get
// by name, and its own token it may renew.
func SecretsRoleName(node string) string { return clusterconfig.NodeServiceAccount(node) }

// authDelegator is Kubernetes' bootstrap ClusterRole for TokenReviews and SubjectAccessReviews:
// what the metrics endpoint asks about its callers.
const authDelegator = "system:auth-delegator"

// AuthDelegatorBinding names the binding of both nodes' ServiceAccounts to authDelegator.
const AuthDelegatorBinding = "tnf-node-auth-delegator"

// TopologyReader names the ClusterRole (and its binding to both nodes' ServiceAccounts) that
// may get the Infrastructure object "cluster", by name only: setup reads the control plane's
// topology there, and on DualReplica leaves Pacemaker to the cluster-etcd-operator.
const TopologyReader = "tnf-node-topology-reader"

// StatusPublisher names the ClusterRole (and its binding to both nodes' ServiceAccounts) that
// may write the PacemakerCluster object "cluster" and its status (tnfctl publish-status), and
// the Role in openshift-etcd that may create Events there.
const StatusPublisher = "tnf-node-status-publisher"

// PacemakerClusterCRD is the PacemakerCluster CRD's manifest, created once: a release that ships
// its own keeps it.
const PacemakerClusterCRD = "create-once/customresourcedefinition-pacemakerclusters.etcd.openshift.io.yaml"

// AuthkeyManifest is the Corosync key's Secret, in a folder of its own under the manifests: it
// is created once (oc create) and never applied again, and `oc apply -f` of the manifests'
// folder, which does not descend into it, cannot replace the key of a running cluster.
const AuthkeyManifest = "create-once/secret-" + clusterconfig.AuthkeySecret + ".yaml"

// NodeSecrets are the manifests that deliver the node configuration's secrets through the API
// instead of a MachineConfig, keyed by file name: one Secret per node's BMC credential in the
// installer's own name and shape (fencing-credentials-<node>: address, username, password,
// certificateVerification; an installer's Secret of that name is the same object), the
// Corosync key's Secret, and per node a ServiceAccount (clusterconfig.NodeServiceAccount), a
// Role that may get exactly those Secrets (and the metrics endpoint's serving certificate) by
// name and renew the account's own bound token, and the bindings, among them, unless cluster.yaml
// names another credential for the taint, a ClusterRole that may taint the peer's Node alone.
// Both nodes get both BMC passwords: each checks either BMC (tnfctl fence-check --target, its
// own BMC's identity among them) and writes both into Pacemaker's cibsecret store.
func NodeSecrets(in clusterconfig.Input) (map[string]any, error) {
	values := map[string][]byte{}
	for _, s := range in.Secrets {
		values[s.Path] = s.Data
	}
	objs := map[string]any{}
	names := []string{}
	for i, n := range in.Config.Nodes {
		password, ok := values[n.BMC.PasswordFile]
		if !ok {
			return nil, fmt.Errorf("nodes[%d].bmc: no password was read for %s", i, n.Name)
		}
		name := clusterconfig.FencingSecret(n.Name)
		objs["secret-"+name+".yaml"] = secret(name, map[string][]byte{"address": []byte(n.BMC.Address), "username": []byte(n.BMC.Username),
			"password": password, "certificateVerification": []byte(n.BMC.CertificateVerification)})
		names = append(names, name)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(values[clusterconfig.AuthkeyFile])))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("corosyncAuthkeyFile: no key to deliver")
	}
	objs[AuthkeyManifest] = secret(clusterconfig.AuthkeySecret, map[string][]byte{clusterconfig.AuthkeySecretKey: key})
	names = append(names, clusterconfig.AuthkeySecret, clusterconfig.MetricsTLSSecret)
	ns := clusterconfig.SecretsNamespace
	var everyNode []rbacv1.Subject
	for i, n := range in.Config.Nodes {
		account := clusterconfig.NodeServiceAccount(n.Name)
		subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: ns}
		everyNode = append(everyNode, subject)
		objs["serviceaccount-"+account+".yaml"] = &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: account, Namespace: ns}}
		role := SecretsRoleName(n.Name)
		objs["role-"+role+".yaml"] = &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
			// get by name only: no list or watch, which would reveal every Secret of the namespace.
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: names},
				// Its own bound token renewed by the node, with the token itself (nodetoken).
				{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{account}}}}
		objs["rolebinding-"+role+".yaml"] = &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role}, Subjects: []rbacv1.Subject{subject}}
		if !in.Config.OutOfService.Disabled && in.Config.OutOfService.KubeconfigFile == "" {
			// tnf-out-of-service.service runs with the node's credential by default (FromAPI).
			name := outofservice.NodeClusterRoleName(n.Name)
			objs["clusterrole-"+name+".yaml"] = outofservice.ClusterRole(name, in.Config.Nodes[1-i].Name)
			objs["clusterrolebinding-"+name+".yaml"] = clusterRoleBinding(name, name, subject)
		}
	}
	objs["clusterrolebinding-"+AuthDelegatorBinding+".yaml"] = clusterRoleBinding(AuthDelegatorBinding, authDelegator, everyNode...)
	objs["clusterrole-"+TopologyReader+".yaml"] = &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: TopologyReader},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{nodesetup.InfrastructureResource.Group}, Resources: []string{nodesetup.InfrastructureResource.Resource},
			Verbs: []string{"get"}, ResourceNames: []string{nodesetup.InfrastructureName}}}}
	objs["clusterrolebinding-"+TopologyReader+".yaml"] = clusterRoleBinding(TopologyReader, TopologyReader, everyNode...)
	if err := statusPublisher(objs, everyNode); err != nil {
		return nil, err
	}
	return objs, nil
}

// statusPublisher adds what tnfctl publish-status needs: the CRD, and for every node the right to
// read the object "cluster", create it (create cannot be limited to a name; the CRD allows no
// other) and write its status, and to create Events in openshift-etcd. No list, watch, delete or
// update of the object itself (its labels, its finalizers).
func statusPublisher(objs map[string]any, nodes []rbacv1.Subject) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(pacemakercluster.CRD, &crd); err != nil {
		return fmt.Errorf("the PacemakerCluster CRD: %w", err)
	}
	objs[PacemakerClusterCRD] = &crd
	group, resource := pacemakercluster.Resource.Group, pacemakercluster.Resource.Resource
	objs["clusterrole-"+StatusPublisher+".yaml"] = &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: StatusPublisher},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{"get"}, ResourceNames: []string{pacemakercluster.Name}},
			{APIGroups: []string{group}, Resources: []string{resource + "/status"}, Verbs: []string{"update"}, ResourceNames: []string{pacemakercluster.Name}},
			{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{"create"}}}}
	objs["clusterrolebinding-"+StatusPublisher+".yaml"] = clusterRoleBinding(StatusPublisher, StatusPublisher, nodes...)
	ns := pacemakercluster.EventNamespace
	objs["role-"+StatusPublisher+".yaml"] = &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: StatusPublisher, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}}}
	objs["rolebinding-"+StatusPublisher+".yaml"] = &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: StatusPublisher, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: StatusPublisher}, Subjects: nodes}
	return nil
}

func clusterRoleBinding(name, clusterRole string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}, Subjects: subjects}
}

func secret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: clusterconfig.SecretsNamespace},
		Type:       corev1.SecretTypeOpaque, Data: data}
}

// FromAPI is in as the node configuration MachineConfig carries it when the Secrets deliver
// the secrets: cluster.yaml says where the node fetches them, and no secret file is left.
func FromAPI(in clusterconfig.Input) clusterconfig.Input {
	in.Secrets = nil
	in.Config.SecretsFromAPI = &clusterconfig.SecretsFromAPI{}
	in.Config.Defaults()
	return in
}

// EarlierAuthkey is the Corosync key an earlier render left in dir (nil when none did): the
// Secret's, or the node configuration MachineConfig's file for pool. Reused, it keeps the
// cluster's key across renders, so that applying a new render never splits the nodes.
func EarlierAuthkey(dir, pool string) ([]byte, error) {
	path := filepath.Join(dir, AuthkeyManifest)
	if data, err := os.ReadFile(path); err == nil {
		var s corev1.Secret
		if err := yaml.UnmarshalStrict(data, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		key, ok := s.Data[clusterconfig.AuthkeySecretKey]
		if !ok {
			return nil, fmt.Errorf("%s: data.%s: missing", path, clusterconfig.AuthkeySecretKey)
		}
		return key, nil
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	path = filepath.Join(dir, nodeConfigName(pool)+".yaml")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var mc mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(data, &mc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Any spec the node configuration is rendered in, read as 3.5.
	cfg, _, err := ign.ParseCompatibleVersion(mc.Spec.Config.Raw)
	if err != nil {
		return nil, fmt.Errorf("%s: spec.config: %w", path, err)
	}
	for i, f := range cfg.Storage.Files {
		if f.Path != clusterconfig.AuthkeyFile || f.Contents.Source == nil {
			continue
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			return nil, fmt.Errorf("%s: spec.config.storage.files[%d].contents.source: %w", path, i, err)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(u.Data)))
		if err != nil {
			return nil, fmt.Errorf("%s: spec.config.storage.files[%d] (%s): %w", path, i, clusterconfig.AuthkeyFile, err)
		}
		return key, nil
	}
	// Delivered as a Secret, which this folder no longer holds: nothing to reuse from here.
	return nil, nil
}
