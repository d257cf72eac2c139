// Package contract is the version of what one node publishes for the other to read: the
// contract between the agents of two nodes that run different layer versions during an update.
// Every item and the rules are in docs/design.md#what-one-node-publishes-for-the-other; version 1
// is every format the layer's first release (0.1.0) writes. A new version only adds, so an
// agent reads its own version, the one before and the one after.
package contract

import (
	"fmt"
	"strconv"
)

// Version is the contract this agent writes and reads.
const Version = 1

// Attr (a node attribute, lifetime forever like the data record it describes) is the contract
// version of the agent that last published this node's attributes. Agents of 0.1.0 publish
// none: absent is version 1.
const Attr = "tnf-contract"

// Parse reads a published Attr; ok false (none published) is version 1.
func Parse(v string, ok bool) (int, error) {
	if !ok {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a contract version", Attr, v)
	}
	return n, nil
}

// Readable says this agent can read what a peer of contract peer publishes: the same version,
// the one before or the one after (which only added to this one).
func Readable(peer int) bool {
	return peer >= max(Version-1, 1) && peer <= Version+1
}

// Unreadable is why an agent waits beside a peer whose contract it cannot read: it never
// guesses what a record of another format means.
func Unreadable(peerName string, peer int) string {
	return fmt.Sprintf("peer %s's agent publishes contract %d, this agent reads contracts %d to %d: "+
		"it waits rather than guess what %s's records mean; update the layer so that the two nodes are at most one release apart",
		peerName, peer, max(Version-1, 1), Version+1, peerName)
}
