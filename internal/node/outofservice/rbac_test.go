package outofservice

import (
	"slices"
	"testing"
)

// TestClusterRoleNeverRemovesANode: the credential can change a Node, never delete one nor
// create one. A deleted Node leaves MCO's pool with one node and none unavailable, and MCO then
// reboots the survivor for an update while its peer is away (design.md, "Updates while one node
// is down").
func TestClusterRoleNeverRemovesANode(t *testing.T) {
	for _, rule := range ClusterRole().Rules {
		if !slices.Contains(rule.Resources, "nodes") && !slices.Contains(rule.Resources, "*") {
			continue
		}
		for _, verb := range rule.Verbs {
			if verb != "get" && verb != "update" && verb != "patch" {
				t.Errorf("the out-of-service ClusterRole may %s nodes", verb)
			}
		}
	}
}
