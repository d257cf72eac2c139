package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

func installerKubeletCommand(nf *nodeFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "installer-kubelet",
		Short: "At boot: start cri-o and kubelet where the installer's etcd runs, cri-o on a guest node",
		Long: "Run by tnf-installer-kubelet.service at every boot, before cri-o and kubelet. While the kubelet's static pod " +
			"runs the installer's etcd (the cluster-etcd-operator's etcd container, before the handover), it lets cri-o and " +
			"kubelet start as the installer left them (" + staticpod.KubeletMarker + "), so that MCO's rollout, which reboots " +
			"one node at a time into the layer, keeps both etcd members and the API. On a node whose Pacemaker the " +
			"cluster-etcd-operator configured (a guest: " + nodesetup.GuestMarker + ", or its corosync.conf) it starts cri-o " +
			"only (" + nodesetup.GuestBootMarker + "): the operator's kubelet resource starts the kubelet. Everywhere else it does nothing: only " +
			"Pacemaker starts cri-o and kubelet, and a node booted alone stays inert; so too once this node's etcd was handed " +
			"over, whatever the manifest says later. The handover and the etcd agent's launch remove the marker. It prints " +
			"what it decided and why.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The cluster's configuration only, not this node's: at this point of the boot the
			// host may not have its name yet.
			cfg, err := clusterconfig.Load(nf.config)
			if err != nil {
				return err
			}
			manifest := cfg.Resources.Etcd["static_pod_manifest"]
			if manifest == "" {
				manifest = etcdnode.DefaultStaticPodManifest
			}
			st, _, err := handover.ReadState(handover.StateFile)
			if err != nil {
				return err
			}
			why, err := nodesetup.StartBootServices(cmd.Context(), manifest, cfg.ClusterName, st.HandedOver(), nodesetup.Systemd{})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), why)
			return nil
		},
	}
}
