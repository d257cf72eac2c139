//go:build integration

// Package cluster_test is a real two-node cluster on one machine: each node is a network, mount
// and UTS namespace running real Corosync, Pacemaker, pcs, the layer's fence agents and bin/ocf-etcd with
// real bin/etcd; the nodes share a cluster link (a veth pair) and reach their BMCs, served by
// bin/redfish-emulator, on a separate management network. Powering a node off takes its
// addresses (nothing answers for it) and kills every process of its namespace; powering it on
// gives them back and boots it as systemd would. There is no systemd in
// the nodes, so cri-o and kubelet are stand-ins (testdata/standin: an OCF agent running sleep,
// whose stop can be made to fail).
package cluster_test

import (
	"flag"
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
	flag.Parse()
	reapAbandoned()
	if err := selectScenarios(os.Getenv("TNF_CLUSTER_SET")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// coreScenarios are the seed's first failure timelines that need no kube-apiserver (a cold boot,
// either node's power cut): make test runs them, in one round, so that it stays within its 15
// minutes on a fresh machine, where building, vetting and the packages' tests take about 12
// first. The link cut and the kubelet's and etcd's failures run the API: make cluster-ci.
const coreScenarios = "^(TestColdBoot|TestNodeFailure)$"

// selectScenarios applies TNF_CLUSTER_SET to the run through go test's own -run and -skip:
//   - core: coreScenarios (make test), unless -run names others;
//   - ci: every scenario but those and the ones marked onlyInClusterTest (make cluster-ci,
//     which CI runs after make test);
//   - all: every scenario (make cluster-test);
//   - empty: core and ci.
func selectScenarios(set string) error {
	switch set {
	case "core":
		if flag.Lookup("test.run").Value.String() == "" {
			return flag.Set("test.run", coreScenarios)
		}
	case "ci":
		skip := coreScenarios
		if earlier := flag.Lookup("test.skip").Value.String(); earlier != "" {
			skip = earlier + "|" + skip
		}
		return flag.Set("test.skip", skip)
	case "", "all":
	default:
		return fmt.Errorf("TNF_CLUSTER_SET=%q: want core, ci or all", set)
	}
	return nil
}
