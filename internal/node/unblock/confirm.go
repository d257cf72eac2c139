package unblock

import (
	"context"
	"fmt"
	"io"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// ErrPeerMember is the refusal to confirm a peer that is a live Corosync member.
var ErrPeerMember = fmt.Errorf("the peer is a live Corosync member: refusing to confirm it down")

// PeerAway reads Corosync's membership and refuses a peer that is a member (alive, and may hold
// OpenShift's data) or that Corosync does not know. The command asks it before its question, and
// Confirm again before it acts.
func PeerAway(ctx context.Context, tools pcmk.Tools, peer string) (pcmk.Membership, error) {
	m, err := tools.Members(ctx)
	if err != nil {
		return m, fmt.Errorf("reading the Corosync membership: %w", err)
	}
	if _, ok := m.Nodes[peer]; !ok {
		return m, fmt.Errorf("%s is not in Corosync's node list", peer)
	}
	if m.Nodes[peer] {
		return m, fmt.Errorf("%s: %w", peer, ErrPeerMember)
	}
	return m, nil
}

// Confirm does what an admin's confirmation means, printing each step: the peer is confirmed
// fenced (Pacemaker may then run everything here), Corosync's wait_for_all is cancelled (this
// node becomes quorate alone) and the scheduler is made to run again. It refuses while the peer
// is a member (PeerAway).
func Confirm(ctx context.Context, tools pcmk.Tools, peer string, out io.Writer) error {
	m, err := PeerAway(ctx, tools, peer)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "confirm: %s is not a Corosync member\n", peer)
	if err := tools.ConfirmFenced(ctx, peer); err != nil {
		return err
	}
	fmt.Fprintf(out, "confirm: %s confirmed fenced (stonith_admin --confirm)\n", peer)
	if m.WaitingForAll {
		if err := tools.CancelWaitForAll(ctx); err != nil {
			return err
		}
		fmt.Fprintln(out, "confirm: wait_for_all cancelled (quorum.cancel_wait_for_all=1)")
	} else {
		fmt.Fprintln(out, "confirm: not waiting for all nodes: quorum unchanged")
	}
	if err := tools.Recheck(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "confirm: Pacemaker asked to re-check: this node starts OpenShift alone")
	return nil
}
