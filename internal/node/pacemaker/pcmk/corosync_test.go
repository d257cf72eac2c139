package pcmk

import (
	"reflect"
	"strings"
	"testing"
)

// Output as Corosync 3.1.7 prints it for a node that booted alone (wait_for_all holds quorum back).
const (
	cmapNodelist = `nodelist.node.0.name (str) = node1
nodelist.node.0.nodeid (u32) = 1
nodelist.node.0.ring0_addr (str) = 10.0.0.1
nodelist.node.1.name (str) = node2
nodelist.node.1.nodeid (u32) = 2
nodelist.node.1.ring0_addr (str) = 10.0.0.2
`
	cmapRuntimeAlone = `runtime.members.1.config_version (u64) = 0
runtime.members.1.ip (str) = r(0) ip(10.0.0.1) 
runtime.members.1.join_count (u32) = 1
runtime.members.1.status (str) = joined
runtime.votequorum.this_node_id (u32) = 1
runtime.votequorum.two_node (u8) = 1
runtime.votequorum.wait_for_all_status (u8) = 1
`
	quorumtoolAlone = `Quorum information
------------------
Nodes:            1
Node ID:          1
Quorate:          No

Votequorum information
----------------------
Flags:            2Node WaitForAll 
`
)

func TestMembership(t *testing.T) {
	got, err := membership(parseCmap(cmapNodelist), parseCmap(cmapRuntimeAlone), quorumtoolAlone)
	if err != nil {
		t.Fatal(err)
	}
	want := Membership{Nodes: map[string]bool{"node1": true, "node2": false}, WaitingForAll: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := membership(parseCmap(cmapNodelist), parseCmap(cmapRuntimeAlone), "garbage"); err == nil {
		t.Fatal("no Quorate line: want an error")
	}
}

// TestMembershipNotUnderstood: output that does not show this node as a joined member (a failed
// or partial read) is an error, never a membership in which the peer is "not a member".
func TestMembershipNotUnderstood(t *testing.T) {
	for name, tc := range map[string]struct{ nodelist, runtime string }{
		"no runtime keys":               {cmapNodelist, ""},
		"no runtime keys for this node": {cmapNodelist, strings.ReplaceAll(cmapRuntimeAlone, "runtime.members.1.", "runtime.members.9.")},
		"this node not joined":          {cmapNodelist, strings.Replace(cmapRuntimeAlone, "= joined", "= left", 1)},
		"a status not known":            {cmapNodelist, cmapRuntimeAlone + "runtime.members.2.status (str) = maybe\n"},
		"this node not in the nodelist": {cmapNodelist, strings.Replace(cmapRuntimeAlone, "this_node_id (u32) = 1", "this_node_id (u32) = 7", 1)},
		"no nodelist":                   {"", cmapRuntimeAlone},
	} {
		m, err := membership(parseCmap(tc.nodelist), parseCmap(tc.runtime), quorumtoolAlone)
		if err == nil {
			t.Errorf("%s: %+v, want an error", name, m)
		}
	}
}

// TestMembershipVotes: votequorum's counts and the membership table of corosync-quorumtool -s
// (Corosync 3.1.7, both nodes joined).
func TestMembershipVotes(t *testing.T) {
	const quorumtool = `Quorum information
------------------
Date:             Tue Nov 24 19:20:01 2026
Quorum provider:  corosync_votequorum
Nodes:            2
Node ID:          1
Ring ID:          1.d
Quorate:          Yes

Votequorum information
----------------------
Expected votes:   2
Highest expected: 2
Total votes:      2
Quorum:           1  
Flags:            2Node Quorate WaitForAll 

Membership information
----------------------
    Nodeid      Votes Name
         1          1 node1 (local)
         2          1 node2
`
	got, err := membership(parseCmap(cmapNodelist), parseCmap(cmapRuntimeAlone), quorumtool)
	if err != nil {
		t.Fatal(err)
	}
	votes := map[string]int{"Expected votes": 2, "Highest expected": 2, "Total votes": 2, "Quorum": 1}
	members := []Member{{ID: "1", Name: "node1", Votes: 1, Local: true}, {ID: "2", Name: "node2", Votes: 1}}
	if !got.Quorate || !reflect.DeepEqual(got.Votes, votes) || !reflect.DeepEqual(got.Members, members) {
		t.Fatalf("got %+v", got)
	}
}

// TestLinks: corosync-cfgtool -s of Corosync 3.1 (knet), one link healthy, one that lost node 2.
func TestLinks(t *testing.T) {
	const cfgtool = `Local node ID 1, transport knet
LINK ID 0 udp
	addr	= 192.168.77.1
	status:
		nodeid:          1:	localhost
		nodeid:          2:	connected
LINK ID 1 udp
	addr	= 10.77.0.11
	status:
		nodeid:          1:	localhost
		nodeid:          2:	disconnected
`
	want := []Link{{ID: "0", Address: "192.168.77.1"}, {ID: "1", Address: "10.77.0.11", Faulty: true}}
	if got := parseLinks(cfgtool); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
