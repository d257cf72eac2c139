package pcmk

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// cmap reads the keys under prefix from Corosync's configuration map: key → value.
func (t Tools) cmap(ctx context.Context, prefix string) (map[string]string, error) {
	out, err := t.Run(ctx, "corosync-cmapctl", "-b", prefix)
	if err != nil {
		return nil, err
	}
	return parseCmap(out), nil
}

// parseCmap reads corosync-cmapctl's "key (type) = value" lines.
func parseCmap(out string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), " (")
		if !ok {
			continue
		}
		if _, val, ok := strings.Cut(rest, ") = "); ok {
			m[key] = val
		}
	}
	return m
}

// Membership is Corosync's view from this node.
type Membership struct {
	// Nodes are the configured nodes by name, true when a joined member now.
	Nodes         map[string]bool
	Quorate       bool
	WaitingForAll bool // two_node's wait_for_all still holds quorum back
	// Votes is votequorum's count by its corosync-quorumtool name ("Expected votes", "Highest
	// expected", "Total votes", "Quorum").
	Votes map[string]int `json:",omitempty"`
	// Members are the joined members with their votes, as corosync-quorumtool lists them.
	Members []Member `json:",omitempty"`
}

// Member is one line of corosync-quorumtool's membership table.
type Member struct {
	ID    string
	Name  string
	Votes int
	Local bool
}

// Members returns who is in the membership, quorum and the wait-for-all state. It fails when
// Corosync does not run.
func (t Tools) Members(ctx context.Context) (Membership, error) {
	nodelist, err := t.cmap(ctx, "nodelist.node.")
	if err != nil {
		return Membership{}, err
	}
	runtime, err := t.cmap(ctx, "runtime.")
	if err != nil {
		return Membership{}, err
	}
	// corosync-quorumtool exits 2 when not quorate; its "Quorate:" line says it either way.
	out, err := t.Run(ctx, "corosync-quorumtool", "-s")
	if err != nil && command.ExitCode(err) != 2 {
		return Membership{}, err
	}
	return membership(nodelist, runtime, out)
}

// membership combines the node list, the runtime keys and corosync-quorumtool -s.
func membership(nodelist, runtime map[string]string, quorumtool string) (Membership, error) {
	m := Membership{Nodes: map[string]bool{}}
	var idx []string
	for k := range nodelist {
		if rest, ok := strings.CutPrefix(k, "nodelist.node."); ok && strings.HasSuffix(rest, ".name") {
			idx = append(idx, strings.TrimSuffix(rest, ".name"))
		}
	}
	sort.Strings(idx)
	if len(idx) == 0 {
		return m, fmt.Errorf("corosync-cmapctl: no node in the nodelist")
	}
	// A node that has not joined since Corosync started has no runtime keys: that is "not a
	// member" (the peer of a node booted alone). This node itself always has them once Corosync
	// runs, so output without them is output not understood, never a membership without it:
	// confirm-peer-down and auto-unblock act on "the peer is not a member".
	self := runtime["runtime.votequorum.this_node_id"]
	selfListed := false
	for _, i := range idx {
		name := nodelist["nodelist.node."+i+".name"]
		id := nodelist["nodelist.node."+i+".nodeid"]
		if _, err := strconv.Atoi(id); err != nil {
			return m, fmt.Errorf("corosync nodelist: node %s has no nodeid", name)
		}
		status, known := runtime["runtime.members."+id+".status"]
		if known && status != "joined" && status != "left" {
			return m, fmt.Errorf("corosync-cmapctl: node %s has status %q, neither joined nor left", name, status)
		}
		m.Nodes[name] = status == "joined"
		if id == self {
			selfListed = true
			if status != "joined" {
				return m, fmt.Errorf("corosync-cmapctl: this node (%s, nodeid %s) is not a joined member in its own runtime keys: the output was not understood", name, id)
			}
		}
	}
	if !selfListed {
		return m, fmt.Errorf("corosync-cmapctl: this node's id (runtime.votequorum.this_node_id %q) is not in the nodelist", self)
	}
	quorate, found := "", false
	for _, line := range strings.Split(quorumtool, "\n") {
		key, val, _ := strings.Cut(line, ":")
		switch key {
		case "Quorate":
			quorate, found = strings.TrimSpace(val), true
		case "Expected votes", "Highest expected", "Total votes", "Quorum":
			// "Quorum:           1  Activity blocked": the number is the first field.
			if f := strings.Fields(val); len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					if m.Votes == nil {
						m.Votes = map[string]int{}
					}
					m.Votes[key] = n
				}
			}
		}
		// The membership table: "         1          1 node1 (local)".
		if f := strings.Fields(line); len(f) >= 3 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				if votes, err := strconv.Atoi(f[1]); err == nil {
					m.Members = append(m.Members, Member{ID: f[0], Name: f[2], Votes: votes, Local: len(f) > 3 && f[3] == "(local)"})
				}
			}
		}
	}
	if !found {
		return m, fmt.Errorf("corosync-quorumtool -s: no Quorate line")
	}
	m.Quorate = quorate == "Yes"
	m.WaitingForAll = runtime["runtime.votequorum.wait_for_all_status"] == "1"
	return m, nil
}

// CancelWaitForAll lifts wait_for_all on this node, as `pcs quorum unblock` does.
func (t Tools) CancelWaitForAll(ctx context.Context) error {
	_, err := t.Run(ctx, "corosync-cmapctl", "-s", "quorum.cancel_wait_for_all", "u8", "1")
	return err
}

// CorosyncConfig reads the totem and nodelist settings the running Corosync holds: those of
// corosync.conf as it was at Corosync's start or last reload.
func (t Tools) CorosyncConfig(ctx context.Context) (map[string]string, error) {
	totem, err := t.cmap(ctx, "totem.")
	if err != nil {
		return nil, err
	}
	nodelist, err := t.cmap(ctx, "nodelist.")
	if err != nil {
		return nil, err
	}
	maps.Copy(totem, nodelist)
	return totem, nil
}

// ReloadCorosync makes every Corosync of the cluster read its corosync.conf again
// (corosync-cfgtool -R): one cluster-wide step, whose effect depends on what each node's file
// says.
func (t Tools) ReloadCorosync(ctx context.Context) error {
	_, err := t.Run(ctx, "corosync-cfgtool", "-R")
	return err
}

// Link is one Corosync (knet) link as corosync-cfgtool -s shows it, and its state towards each
// other node.
type Link struct {
	ID      string
	Address string
	// Faulty is true when the link is not connected to some other configured node.
	Faulty bool
}

// Links reads the links' state (corosync-cfgtool -s). It exits 1 when a link is faulty, and
// prints the state all the same.
func (t Tools) Links(ctx context.Context) ([]Link, error) {
	out, err := t.Run(ctx, "corosync-cfgtool", "-s")
	if err != nil && command.ExitCode(err) != 1 {
		return nil, err
	}
	return parseLinks(out), nil
}

// parseLinks reads Corosync 3.1's knet listing:
//
//	LINK ID 0 udp
//		addr	= 192.168.77.1
//		status:
//			nodeid:          1:	localhost
//			nodeid:          2:	connected
func parseLinks(out string) []Link {
	var links []Link
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "LINK" && f[1] == "ID":
			links = append(links, Link{ID: f[2]})
		case len(links) == 0:
		case len(f) == 3 && f[0] == "addr" && f[1] == "=":
			links[len(links)-1].Address = f[2]
		case len(f) >= 3 && f[0] == "nodeid:":
			if state := strings.Join(f[2:], " "); state != "localhost" && state != "connected" {
				links[len(links)-1].Faulty = true
			}
		}
	}
	return links
}
