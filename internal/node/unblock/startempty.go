package unblock

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// ErrNotTheServed is the refusal when the cluster an administrator gives up is not the one this
// cluster recorded as served: nothing is given up by a mistyped or stale ID.
var ErrNotTheServed = errors.New("not the etcd cluster this cluster served")

// NamedServed checks that named (hex, as tnfctl status and the agent's refusal give it) is the
// etcd cluster this cluster recorded as served (etcdnode.PropServed), and returns it.
func NamedServed(ctx context.Context, store attrs.Store, named string) (uint64, error) {
	served, err := etcdnode.ReadServed(ctx, store)
	if err != nil {
		// A record that is no cluster ID stops every decision: typed as it stands, it goes.
		if raw, ok, rerr := store.Property(ctx, etcdnode.PropServed); rerr == nil && ok && raw == named {
			return 0, nil
		}
		return 0, err
	}
	id, perr := strconv.ParseUint(named, 16, 64)
	switch {
	case served == 0:
		return 0, fmt.Errorf("no served etcd cluster is recorded, so nothing holds a new cluster back: %w", ErrNotTheServed)
	case perr != nil || id != served:
		return served, fmt.Errorf("--give-up %q: this cluster served etcd cluster %x: %w", named, served, ErrNotTheServed)
	}
	return served, nil
}

// GiveUpServed deletes the record of the served etcd cluster, so that two nodes without data
// may create a new, empty one.
func GiveUpServed(ctx context.Context, store attrs.Store) error {
	return store.SetProperty(ctx, etcdnode.PropServed, "")
}
