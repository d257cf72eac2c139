package nodesetup

import (
	"maps"
	"slices"
	"testing"
)

// TestCorosyncDrift: every kind of difference between corosync.conf and the running Corosync,
// each sorted to what applies it.
func TestCorosyncDrift(t *testing.T) {
	file := map[string]string{"totem.cluster_name": "tnf", "totem.token": "3000",
		"nodelist.node.0.ring0_addr": "192.0.2.1", "nodelist.node.0.name": "node1", "nodelist.node.0.nodeid": "1",
		"nodelist.node.1.ring0_addr": "192.0.2.2", "nodelist.node.1.name": "node2", "nodelist.node.1.nodeid": "2"}
	// What corosync-cmapctl shows besides: keys the file does not set (defaults, computed).
	running := maps.Clone(file)
	running["totem.version"], running["totem.crypto_cipher"], running["nodelist.local_node_pos"] = "2", "aes256", "0"
	with := func(change func(m map[string]string)) map[string]string {
		m := maps.Clone(running)
		change(m)
		return m
	}
	for _, tc := range []struct {
		name            string
		running         map[string]string
		reload, restart []string
	}{
		{"the same", running, nil, nil},
		{"a new token", with(func(m map[string]string) { m["totem.token"] = "2000" }), []string{"totem.token"}, nil},
		{"a node's new address", with(func(m map[string]string) { m["nodelist.node.1.ring0_addr"] = "192.0.2.9" }), nil, []string{"nodelist.node.1.ring0_addr"}},
		{"a node's new name", with(func(m map[string]string) { m["nodelist.node.1.name"] = "old" }), nil, []string{"nodelist.node.1.name"}},
		{"another cluster name", with(func(m map[string]string) { m["totem.cluster_name"] = "other" }), nil, []string{"totem.cluster_name"}},
		{"a node the file no longer lists", with(func(m map[string]string) {
			m["nodelist.node.2.ring0_addr"], m["nodelist.node.2.name"], m["nodelist.node.2.nodeid"] = "192.0.2.3", "node3", "3"
		}), nil, []string{"nodelist.node.2.name", "nodelist.node.2.nodeid", "nodelist.node.2.ring0_addr"}},
		{"a token and an address", with(func(m map[string]string) {
			m["totem.token"], m["nodelist.node.0.ring0_addr"] = "2000", "192.0.2.8"
		}), []string{"totem.token"}, []string{"nodelist.node.0.ring0_addr"}},
		{"a token Corosync does not show", with(func(m map[string]string) { delete(m, "totem.token") }), []string{"totem.token"}, nil},
	} {
		reload, restart := corosyncDrift(file, tc.running)
		if !slices.Equal(reload, tc.reload) || !slices.Equal(restart, tc.restart) {
			t.Errorf("%s: reload %v restart %v, want %v and %v", tc.name, reload, restart, tc.reload, tc.restart)
		}
	}
}

// TestShouldReload: every combination of what both nodes know, and when one reload for both is
// right.
func TestShouldReload(t *testing.T) {
	token := []string{"totem.token"}
	addr := []string{"nodelist.node.1.ring0_addr"}
	for _, tc := range []struct {
		name string
		s    corosyncState
		want bool
	}{
		{"nothing differs anywhere", corosyncState{Same: true}, false},
		{"this node's token, both files the same", corosyncState{Same: true, Reload: token}, true},
		{"this node's token, the peer's file not yet", corosyncState{Reload: token}, false},
		{"the peer waits, this node runs its file", corosyncState{Same: true, PeerReload: true}, true},
		{"the peer waits, its file another", corosyncState{PeerReload: true}, false},
		{"both wait", corosyncState{Same: true, Reload: token, PeerReload: true}, true},
		{"this node's address waits for a restart", corosyncState{Same: true, Reload: token, Restart: addr}, false},
		{"the peer's address waits for a restart", corosyncState{Same: true, Reload: token, PeerRestart: true}, false},
		{"only a restart waits", corosyncState{Same: true, Restart: addr}, false},
	} {
		if got := shouldReload(tc.s); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
