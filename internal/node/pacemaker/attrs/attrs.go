// Package attrs is where the etcd agent publishes what it knows for its peer: node attributes
// (cluster ID, raft index), the promotion score, and the cluster-wide force-new-cluster claim.
// On a cluster that is Pacemaker's CIB (CRM); in tests without a cluster it is a shared file.
package attrs

import (
	"context"
	"strings"
)

// Store is the attribute store the agent needs.
type Store interface {
	// Get returns a node attribute; ok is false when it is not set.
	Get(ctx context.Context, node, name string, lt Lifetime) (value string, ok bool, err error)
	// Set sets a node attribute, or deletes it when value is "".
	Set(ctx context.Context, node, name, value string, lt Lifetime) error
	// Claim takes the force-new-cluster claim for owner if it is free, or if it is held by
	// overrideFrom (a fenced peer, "" for none). It returns the holder after the attempt: the
	// claim is owner's exactly when holder == owner. Taking a free claim is atomic.
	Claim(ctx context.Context, owner, overrideFrom string) (holder string, err error)
	// Holder returns who holds the claim ("" for nobody).
	Holder(ctx context.Context) (string, error)
	// Release gives the claim up if owner holds it.
	Release(ctx context.Context, owner string) error
	// Property returns a cluster-wide value (a crm_config option); ok is false when it is not
	// set. It outlives every node's attributes and data.
	Property(ctx context.Context, name string) (value string, ok bool, err error)
	// SetProperty sets a cluster-wide value, or deletes it when value is "".
	SetProperty(ctx context.Context, name, value string) error
	// ReportFailure tells the cluster that resource failed on node, so that it recovers it now
	// rather than at the next monitor.
	ReportFailure(ctx context.Context, node, resource string) error
}

// FailedName is the node attribute (lifetime reboot) in which the file store records a reported
// failure of resource, for tests that play the cluster manager's part.
func FailedName(resource string) string { return "failed-" + BaseResource(resource) }

// Lifetime says how long a node attribute lives.
type Lifetime int

const (
	// Forever attributes survive reboots, so a booting node can read what its peer last
	// published while the peer is down.
	Forever Lifetime = iota
	// Reboot attributes vanish when the node leaves the cluster (reboot, fencing).
	Reboot
)

func (l Lifetime) String() string {
	if l == Reboot {
		return "reboot"
	}
	return "forever"
}

// PromotionName is the node attribute Pacemaker reads as the promotion score of a clone.
func PromotionName(resource string) string { return "master-" + BaseResource(resource) }

// BaseResource strips a clone instance suffix ("etcd:1" → "etcd").
func BaseResource(resource string) string {
	if i := strings.LastIndexByte(resource, ':'); i >= 0 {
		return resource[:i]
	}
	return resource
}
