package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/node/outofservice"
)

func outOfServiceCommand(nf *nodeFlags) *cobra.Command {
	r := &outofservice.Reconciler{}
	var interval time.Duration
	var once bool
	cmd := &cobra.Command{
		Use:   "out-of-service",
		Short: "Taint the fenced peer's Node out-of-service, and take the taint off once the peer is back",
		Long: "Run by tnf-out-of-service.service. Puts node.kubernetes.io/out-of-service=nodeshutdown:NoExecute on the peer's Node " +
			"once Pacemaker's history holds a fencing of it that succeeded (an administrator's confirm-peer-down is one) and the peer " +
			"has not been back since; takes it off once the peer is back in the cluster, its kubelet Ready and no VolumeAttachment " +
			"names it (or 5 minutes after Ready). Only taints it put there (annotated " + outofservice.Annotation + ") are taken off. " +
			"Every change of decision is logged with its reason. Does nothing with outOfService.disabled in cluster.yaml.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			r.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)).With("component", "out-of-service")
			if nc.Config.OutOfService.Disabled {
				r.Log.Info("outOfService.disabled is set in cluster.yaml: nothing to do")
				return nil
			}
			r.Self, r.Peer, r.Kubeconfig = nc.Self.Name, nc.Peer.Name, nc.Config.OutOfServiceKubeconfig()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			if once {
				_, err := r.Pass(ctx)
				return err
			}
			return r.Run(ctx, interval)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", 5*time.Second, "time between passes")
	cmd.Flags().BoolVar(&once, "once", false, "one pass, then exit")
	cmd.Flags().StringVar(&r.LastSeenFile, "last-seen-file", outofservice.LastSeenFile, "where the time this node last saw its peer online is kept")
	kubeconfigFlag(cmd, nf)
	hide(cmd, "last-seen-file")
	return cmd
}
