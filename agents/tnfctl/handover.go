package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// etcdResource is the etcd agent's resource in the cluster configuration (pcs-templates).
const etcdResource = "etcd"

// handoverInterval is how often a waiting step looks again: etcd is without quorum from the
// installer's etcd's exit until the agent's member starts, and this poll is part of that gap.
const handoverInterval = 200 * time.Millisecond

func handoverCommand(nf *nodeFlags) *cobra.Command {
	o := handover.Options{}
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "handover",
		Short: "Hand this node's etcd over from the installer's static pod to the etcd agent, on the same data",
		Long: "Run by tnf-handover.service on both nodes of a cluster the installer made, after setup. Waits until etcd has two " +
			"voting members and a leader and the API answers, sets " + handover.ConditionReady + " on the cluster-etcd-operator's " +
			"Etcd object (the operator then rolls its static pod out without the etcd container, one node at a time), waits until " +
			"the kubelet's manifest here has no etcd container, has Pacemaker probe the etcd resource at once, and waits until the " +
			"agent's member serves here, promoted: the same member on the same data dir, no learner join, nothing moved aside, no " +
			"cluster forced. Once both agents serve, it sets " + handover.ConditionCompleted + ", and the operator stops managing " +
			"the membership. If a node fails during the handover, and the peer's agent has already run etcd, it takes the etcd " +
			"container out of this node's static pod itself, as the operator's revision does. A run resumes where the node " +
			"stands (after a reboot, say); tnfctl status shows the step and why it waits. Once done on this node it removes its " +
			"credential (--kubeconfig), which may rewrite the Etcd object's status and is needed no more. Running it again after " +
			"it completed changes nothing.",
		Example: "  tnfctl handover\n  systemctl status tnf-handover.service",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			e, err := loadEtcdNodes(nf)
			if err != nil {
				return err
			}
			op, err := handover.NewOperator(kubeconfig)
			if err != nil {
				// A completed handover removed its credential, and a guest never had one: Run
				// then says so and asks the API nothing.
				st, ok, _ := handover.ReadState(o.StateFile)
				if setup, _ := nodesetup.State(); setup != nodesetup.StateGuest && (!ok || !st.Done()) {
					return err
				}
			}
			o.StaticPodManifest, o.KubeletMarker, o.Out, o.Interval = e.agent.StaticPodManifest, staticpod.KubeletMarker, cmd.OutOrStdout(), handoverInterval
			o.Credential = kubeconfig
			self, peer := nc.Self.Name, nc.Peer.Name
			tools := pcmk.Tools{}
			n := handover.Node{
				Setup:       nodesetup.State,
				EtcdHealthy: e.twoVoters,
				BusyPort:    e.agent.BusyPort,
				Roles: func(ctx context.Context) (string, string, error) {
					st, err := tools.Status(ctx)
					if err != nil {
						return "", "", err
					}
					return st.Role(etcdResource, self), st.Role(etcdResource, peer), nil
				},
				PeerHandedOver: func(ctx context.Context) (bool, error) {
					rec, err := etcdnode.ReadRecord(ctx, e.agent.Store(), peer)
					return rec.Known, err
				},
				PeerFencedAfter: func(ctx context.Context, t time.Time) (bool, error) {
					st, err := tools.Status(ctx)
					return err == nil && st.Fencing.SucceededAfter(peer, t), err
				},
				PeerServesWithout: func(ctx context.Context) (string, error) {
					st, err := tools.Status(ctx)
					if err != nil || st.Role(etcdResource, peer) != "Promoted" {
						return "", err
					}
					return e.peerWithout(ctx)
				},
				Refresh: func(ctx context.Context) error {
					_, err := tools.Run(ctx, "crm_resource", "--refresh", "--resource", etcdResource, "--node", self)
					return err
				},
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return handover.Run(ctx, o, n, op)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", handover.DefaultKubeconfig, "credential for the API: a token bound to ClusterRole "+handover.ClusterRoleName+" only")
	f.DurationVar(&o.Wait, "wait", 30*time.Minute, "longest wait of each step")
	f.StringVar(&o.StateFile, "state-file", handover.StateFile, "where the handover's step is kept for tnfctl status")
	f.StringVar(&o.ToldFile, "told-file", handover.ToldFile, "where the time this node told the operator is kept")
	hide(cmd, "state-file", "told-file")
	return cmd
}

// twoVoters says why etcd is not two voting members with a leader ("" when it is), from
// whichever node answers.
func (e etcdNodes) twoVoters(ctx context.Context) (string, error) {
	cli, err := e.client()
	if err != nil {
		return "", err
	}
	defer cli.Close()
	rctx, cancel := context.WithTimeout(ctx, etcdRequestTimeout)
	defer cancel()
	list, err := cli.MemberList(rctx)
	if err != nil {
		return "etcd's member list: " + err.Error(), nil
	}
	if m := countMembers(list.Members); m.Voters != 2 || m.Learners != 0 {
		return fmt.Sprintf("etcd has %d members, %d of them voting; the handover needs two voters", m.Voters+m.Learners, m.Voters), nil
	}
	for _, ep := range e.endpoints {
		st, err := cli.Status(rctx, ep)
		if err != nil {
			return "etcd at " + ep + ": " + err.Error(), nil
		}
		if st.Leader == 0 {
			return "etcd at " + ep + " has no leader", nil
		}
	}
	return "", nil
}

// peerWithout says why the peer's etcd runs without a member of this node ("" when it has one),
// known by its peer URL: read from the peer's member alone, not linearizable (the local etcd may
// be the installer's, failing to rejoin).
func (e etcdNodes) peerWithout(ctx context.Context) (string, error) {
	cli, err := e.clientOf(e.agent.ClientURL(e.agent.PeerIP))
	if err != nil {
		return "", err
	}
	defer cli.Close()
	rctx, cancel := context.WithTimeout(ctx, etcdRequestTimeout)
	defer cancel()
	list, err := etcdserverpb.NewClusterClient(cli.ActiveConnection()).MemberList(rctx, &etcdserverpb.MemberListRequest{Linearizable: false})
	if err != nil {
		return "", err
	}
	own := e.agent.PeerURL(e.agent.SelfIP)
	for _, m := range list.Members {
		if slices.Contains(m.PeerURLs, own) {
			return "", nil
		}
	}
	return fmt.Sprintf("the peer's etcd agent serves (cluster %x) without a member at %s: it ran alone while this node was away, "+
		"so the installer's etcd here can never rejoin; the agent joins the peer instead", list.Header.ClusterId, own), nil
}
