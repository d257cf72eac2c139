// Package pacemakercluster is the cluster's health where OpenShift's administrators look: the
// PacemakerCluster object (etcd.openshift.io/v1, the singleton "cluster") that OpenShift's own
// two-node clusters publish from 4.22 on, and the Events beside it in openshift-etcd. Build and
// Events are pure functions of what a node read; Publisher writes them through the API.
package pacemakercluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API types below are openshift/api's etcd/v1 PacemakerCluster (the cluster-etcd-operator's
// release-4.22 branch vendors it), field for field with the same JSON names, so that `oc get`,
// must-gather, the console and any policy written for the field's object read the layer's
// unchanged. They are written here because the Go module proxy serves no openshift/api version
// that has them (the operator's v0.0.0-20260514151338-8ecf6a78d1b0: 403); crd.yaml is their
// schema. Replace them by the module's once it is served.

// Resource is the objects' API resource; Name is the one object's name (the CRD allows no other).
var Resource = schema.GroupVersionResource{Group: "etcd.openshift.io", Version: "v1", Resource: "pacemakerclusters"}

const (
	Name = "cluster"
	Kind = "PacemakerCluster"
)

// PacemakerCluster is the cluster's status; it has no spec.
type PacemakerCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            Status `json:"status,omitzero"`
}

// Status is the cluster's conditions (Healthy, InService, NodeCountAsExpected) and each node's.
type Status struct {
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
	LastUpdated metav1.Time        `json:"lastUpdated,omitempty,omitzero"`
	Nodes       *[]NodeStatus      `json:"nodes,omitempty"`
}

// NodeStatus is one node's conditions, its addresses, its kubelet and etcd resources and the
// fence devices that fence it.
type NodeStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	NodeName   string             `json:"nodeName,omitempty"`
	Addresses  []NodeAddress      `json:"addresses,omitempty"`
	Resources  []ResourceStatus   `json:"resources,omitempty"`
	// Required by the CRD, empty or not: the field's type omits an empty list, which the
	// field's own CRD then refuses.
	FencingAgents []FencingAgentStatus `json:"fencingAgents"`
}

// NodeAddress is one of a node's addresses; InternalIP is the only type.
type NodeAddress struct {
	Type    string `json:"type,omitempty"`
	Address string `json:"address,omitempty"`
}

// ResourceStatus is the conditions of Resource Kubelet or Etcd on one node.
type ResourceStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Name       string             `json:"name,omitempty"`
}

// FencingAgentStatus is one fence device's conditions, under the node it fences.
type FencingAgentStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Name       string             `json:"name,omitempty"`
	Method     string             `json:"method,omitempty"` // Redfish or IPMI
}

// The values the CRD allows.
const (
	InternalIP    = "InternalIP"
	Kubelet       = "Kubelet"
	Etcd          = "Etcd"
	MethodRedfish = "Redfish"
	MethodIPMI    = "IPMI"
)

// Condition types: the cluster's, a node's, and a resource's or fence device's, as the API names
// them. Healthy is the aggregate at every level.
const (
	Healthy             = "Healthy"
	InService           = "InService"
	NodeCountAsExpected = "NodeCountAsExpected"

	Online           = "Online"
	Active           = "Active"
	Ready            = "Ready"
	Clean            = "Clean"
	Member           = "Member"
	FencingAvailable = "FencingAvailable"
	FencingHealthy   = "FencingHealthy"

	Managed     = "Managed"
	Enabled     = "Enabled"
	Operational = "Operational"
	Started     = "Started"
	Schedulable = "Schedulable"
)
