// Package poll repeats a check until it holds: the node's waits (for etcd, for the peer, for a
// lock, for a port) share one rule for when to look again and when to give up. It imports
// nothing but the standard library: the fast monitor links it.
package poll

import (
	"context"
	"time"
)

// Every calls check at once, then every interval, until it reports done (nil), fails (its error)
// or ctx ends (ctx's error). The first look is taken even when ctx has ended: a wait whose
// condition already holds succeeds. The time check itself takes is not part of the interval.
func Every(ctx context.Context, interval time.Duration, check func(context.Context) (done bool, err error)) error {
	for {
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
