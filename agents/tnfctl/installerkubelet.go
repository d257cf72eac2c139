package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

func installerKubeletCommand(nf *nodeFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "installer-kubelet",
		Short: "At boot, before the first setup: start cri-o and kubelet where they run the installer's etcd",
		Long: "Run by tnf-installer-kubelet.service at every boot, before cri-o and kubelet. On a node of a cluster the installer " +
			"made, whose kubelet runs the installer's etcd (the cluster-etcd-operator's static pod) and where the layer's setup " +
			"never completed, it lets cri-o and kubelet start as the installer left them (" + nodesetup.InstalledMarker + "), so " +
			"that MCO's rollout, which reboots one node at a time into the layer, keeps both etcd members and the API. " +
			"Everywhere else it does nothing: only Pacemaker starts cri-o and kubelet, and a node booted alone stays inert. " +
			"setup removes the marker once it completed. It prints what it decided and why.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEtcdNodes(nf)
			if err != nil {
				return err
			}
			why, err := nodesetup.StartInstallerKubelet(cmd.Context(), e.agent.StaticPodManifest, nodesetup.Systemd{})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), why)
			return nil
		},
	}
}
