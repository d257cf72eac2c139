package outofservice

import (
	"slices"
	"testing"
)

// TestClusterRoleNeverRemovesANode: the credential can read and patch the two nodes' Nodes by
// name, never delete one, create one, or touch another. A deleted Node leaves MCO's pool with
// one node and none unavailable, and MCO then reboots the survivor for an update while its peer
// is away (design.md, "Updates while one node is down").
func TestClusterRoleNeverRemovesANode(t *testing.T) {
	for _, rule := range ClusterRole(ClusterRoleName, "node1", "node2").Rules {
		if !slices.Contains(rule.Resources, "nodes") && !slices.Contains(rule.Resources, "*") {
			continue
		}
		for _, verb := range rule.Verbs {
			if verb != "get" && verb != "patch" {
				t.Errorf("the out-of-service ClusterRole may %s nodes", verb)
			}
		}
		if !slices.Equal(rule.ResourceNames, []string{"node1", "node2"}) {
			t.Errorf("the out-of-service ClusterRole reaches the Nodes %q, want node1 and node2 only", rule.ResourceNames)
		}
	}
}
