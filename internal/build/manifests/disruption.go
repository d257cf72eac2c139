package manifests

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// ReconfigureUnit applies a changed /etc/tnf on a node already set up (units/); the node
// disruption policy restarts it instead of rebooting the node.
const ReconfigureUnit = "tnf-reconfigure.service"

// MachineConfigurationName is the one MachineConfiguration MCO reads.
const MachineConfigurationName = "cluster"

// NodeDisruptionPolicy is the MachineConfiguration "cluster" (operator.openshift.io/v1) whose
// node disruption policy lets a change of the node configuration MachineConfig restart
// ReconfigureUnit (tnfctl setup) instead of draining and rebooting both nodes in turn: a change
// of cluster.yaml (fence devices, delays, agent parameters, Corosync's token: setup applies each
// in place, the token by one reload of both nodes' Corosync), of a BMC CA bundle, or of a BMC
// password file where the passwords come in the MachineConfig. A node's name or address in
// cluster.yaml reaches Corosync only at its next start: setup says so, and the nodes' next
// reboots apply it. The Corosync key and the etcd pod manifest (read by the handover only) keep
// MCO's default, a reboot.
func NodeDisruptionPolicy(in clusterconfig.Input) (*operatorv1.MachineConfiguration, error) {
	if len(in.Config.Nodes) == 0 {
		return nil, fmt.Errorf("node disruption policy: the node configuration has no node")
	}
	paths := []string{clusterconfig.Path}
	for _, s := range append(slices.Clone(in.Secrets), in.Files...) {
		if s.Path != clusterconfig.AuthkeyFile && strings.HasPrefix(s.Path, clusterconfig.SecretsDir+"/") || strings.HasPrefix(s.Path, clusterconfig.BMCCADir+"/") {
			paths = append(paths, s.Path)
		}
	}
	sort.Strings(paths)
	mc := &operatorv1.MachineConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorv1.GroupVersion.String(), Kind: "MachineConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: MachineConfigurationName},
	}
	for _, p := range paths {
		mc.Spec.NodeDisruptionPolicy.Files = append(mc.Spec.NodeDisruptionPolicy.Files, operatorv1.NodeDisruptionPolicySpecFile{
			Path: p,
			Actions: []operatorv1.NodeDisruptionPolicySpecAction{{
				Type:    operatorv1.RestartSpecAction,
				Restart: &operatorv1.RestartService{ServiceName: ReconfigureUnit},
			}},
		})
	}
	return mc, nil
}

// withoutUnset drops the null, empty and zero values from an object's JSON form. The
// MachineConfiguration types have no omitempty on optional fields: marshalled as they are, they
// would carry managementState "" (refused by the CRD's pattern), an sshkey policy without its
// required actions, and on `oc apply` would overwrite the cluster's own settings with zeros.
func withoutUnset(obj any) (any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return prune(v), nil
}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e = prune(e); e == nil {
				delete(t, k)
			} else {
				t[k] = e
			}
		}
		if len(t) == 0 {
			return nil
		}
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i := range t {
			t[i] = prune(t[i])
		}
	case string:
		if t == "" {
			return nil
		}
	case float64:
		if t == 0 {
			return nil
		}
	case bool:
		if !t {
			return nil
		}
	}
	return v
}
