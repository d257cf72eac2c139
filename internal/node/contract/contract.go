// Package contract is the version of what one node publishes for the other to read: the
// contract between the agents of two nodes that run different layer versions during an update.
// Every item and the rules are in docs/design.md#what-one-node-publishes-for-the-other; version 1
// is every format the layer's first release (0.1.0) writes. A new version only adds, so an
// agent reads its own version, the one before and the one after.
package contract

import (
	"errors"
	"fmt"
	"strconv"
)

// Version is the contract this agent writes and reads.
const Version = 1

// Attr (a node attribute, lifetime forever like the data record it describes) is the contract
// version of the agent that last published this node's attributes. Agents of 0.1.0 publish
// none: absent is version 1.
const Attr = "tnf-contract"

// Malformed stands for a published Attr that is no version at all: unreadable, like a version
// too far away.
const Malformed = -1

// ErrMalformed: a published Attr is not a contract version.
var ErrMalformed = errors.New("not a contract version")

// Parse reads a published Attr; ok false (none published) is version 1. A value that is no
// version is Malformed, with an error wrapping ErrMalformed that says what it was.
func Parse(v string, ok bool) (int, error) {
	if !ok {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return Malformed, fmt.Errorf("%s: %q is %w", Attr, v, ErrMalformed)
	}
	return n, nil
}

// Readable says this agent can read what a peer of contract peer publishes: the same version,
// the one before or the one after (which only added to this one).
func Readable(peer int) bool {
	return peer >= max(Version-1, 1) && peer <= Version+1
}

// UnreadableReason begins the reason of an agent that waits beside a peer whose contract it
// cannot read (tnfctl status gives its own advice for it).
const UnreadableReason = "this agent cannot read what its peer publishes"

// Unreadable is why an agent waits beside a peer whose contract it cannot read: it never
// guesses what a record of another format means.
func Unreadable(peerName string, peer int) string {
	published := fmt.Sprintf("contract %d", peer)
	if peer == Malformed {
		published = "a contract version that is no number"
	}
	return fmt.Sprintf("%s: peer %s's agent publishes %s and this agent reads contracts %d to %d, so it waits rather "+
		"than guess what %s's records mean; bring the two nodes' layers to within one contract of each other",
		UnreadableReason, peerName, published, max(Version-1, 1), Version+1, peerName)
}
