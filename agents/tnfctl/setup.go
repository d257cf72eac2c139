package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

func setupCommand(nf *nodeFlags) *cobra.Command {
	o := nodesetup.Options{}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Set this node up from /etc/tnf: Corosync, Pacemaker and, on the fence race winner, the cluster configuration",
		Long: "Renders corosync.conf from the pcs templates, installs the shared authkey and the BMC passwords as " +
			"Pacemaker secrets, keeps cri-o and kubelet out of systemd's boot, starts Corosync and Pacemaker. " +
			"On the fence race winner it waits for the peer to join, checks both BMC credentials through the Redfish API " +
			"and the second fencing level's agent, then applies the cluster configuration (pcs -f offline, patched into the live CIB). " +
			"Running it again changes nothing. One line per step. --if-changed runs it only on a node not set up yet, " +
			"after a failed run, or when /etc/tnf's configuration or a file it names (the Corosync key, a BMC password " +
			"or CA bundle) changed since the last completed run (tnf-setup.service at boot).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Config, o.Node, o.Kubeconfig, o.Out = nf.config, nf.node, nf.kubeconfig, cmd.OutOrStdout()
			return nodesetup.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.IfChanged, "if-changed", false, "do nothing where the last completed run applied the same inputs")
	f.DurationVar(&o.Wait, "wait", time.Hour, "longest wait for Corosync, then for the peer to join")
	f.StringVar(&o.PCS, "pcs", "pcs", "pcs binary")
	f.StringVar(&o.Fence.Agent, "fence-agent", fencerun.DefaultAgent, "the second fencing level's agent, for the BMC checks")
	f.DurationVar(&o.Fence.Timeout, "fence-timeout", 20*time.Second, "deadline of each BMC check")
	f.BoolVar(&o.Fence.BasicAuth, "basic-auth", false, "Basic auth instead of a Redfish session (for BMCs without sessions)")
	kubeconfigFlag(cmd, nf)
	hide(cmd, "pcs", "fence-agent")
	return cmd
}
