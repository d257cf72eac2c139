package restore

import (
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// TestNotManaged: maintenance mode or an unmanaged instance of etcd, and nothing else, keeps
// Pacemaker from stopping etcd for the restore.
func TestNotManaged(t *testing.T) {
	etcd := func(node string, unmanaged bool) pcmk.ResourceRole {
		return pcmk.ResourceRole{ID: "etcd", Node: node, Clone: "etcd-clone", Role: "Promoted", Unmanaged: unmanaged}
	}
	for _, tc := range []struct {
		name string
		st   pcmk.Status
		says string
	}{
		{"managed", pcmk.Status{Resources: []pcmk.ResourceRole{etcd("node1", false), etcd("node2", false)}}, ""},
		{"maintenance mode", pcmk.Status{MaintenanceMode: true}, "maintenance mode"},
		{"etcd unmanaged on node2", pcmk.Status{Resources: []pcmk.ResourceRole{etcd("node1", false), etcd("node2", true)}},
			"etcd on node2 is unmanaged (pcs resource manage etcd-clone)"},
		{"another resource unmanaged", pcmk.Status{Resources: []pcmk.ResourceRole{{ID: "kubelet", Node: "node1", Unmanaged: true}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notManaged(tc.st, "etcd")
			if (tc.says == "") != (got == "") || !strings.Contains(got, tc.says) {
				t.Fatalf("notManaged = %q, want one saying %q", got, tc.says)
			}
		})
	}
}

// TestGaveUp: the cluster the restore gives up on the peer is the one its data holds, or the one
// served before when the peer never published its data; none when the peer holds the restored one.
func TestGaveUp(t *testing.T) {
	data := func(id uint64) decision.Data {
		return decision.Data{Known: true, Present: true, ClusterID: id, Index: 7}
	}
	rec := &etcdnode.Restore{Cluster: "c0ffee", GaveUp: "1f"}
	for _, tc := range []struct {
		name    string
		peer    decision.Data
		gaveUp  string
		want    uint64
		wantErr bool
	}{
		{"the peer's data", data(0x2a), "1f", 0x2a, false},
		{"the peer holds the restored cluster", data(0xc0ffee), "1f", 0, false},
		{"no record of the peer's data: the served one", decision.Data{}, "1f", 0x1f, false},
		{"no record and none served", decision.Data{}, "", 0, false},
		{"an unreadable served cluster", decision.Data{}, "zz", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.GaveUp = tc.gaveUp
			got, err := Runner{}.gaveUp(tc.peer, rec)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("gaveUp = %x, %v; want %x (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
