//go:build integration

// Package cluster_test is a real two-node cluster on one machine: each node is a network, mount
// and UTS namespace running real Corosync, Pacemaker, pcs, fence_redfish and bin/ocf-etcd with
// real bin/etcd; the nodes share a cluster link (a veth pair) and reach their BMCs, served by
// bin/redfish-emulator, on a separate management network. Powering a node off takes its
// addresses (nothing answers for it) and kills every process of its namespace; powering it on
// gives them back and boots it as systemd would. There is no systemd in
// the nodes, so cri-o and kubelet are stand-ins (testdata/standin: an OCF agent running sleep,
// whose stop can be made to fail).
package cluster_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
)

func TestMain(m *testing.M) {
	// The emulator's power commands run this binary again, and so does a node's stand-in kubelet.
	for name, command := range map[string]func([]string) error{"tnf-power": powerCommand, "tnf-kubelet": kubeletstandin.Run} {
		if len(os.Args) > 1 && os.Args[1] == name {
			if err := command(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}
