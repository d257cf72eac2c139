package main

import (
	"context"
	"log/slog"
	"net/netip"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fenceagent"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/powerwatch"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func powerWatchCommand(nf *nodeFlags) *cobra.Command {
	w := powerwatch.Watcher{Dir: powerwatch.Dir, Gap: fenceagent.DefaultGap, ReadTimeout: fenceagent.SecondLevelReadTimeout}
	var heartbeatPort uint16
	cmd := &cobra.Command{
		Use:   "power-watch",
		Short: "While the link to the peer is down, read the peer's power through its BMC for the first fencing level",
		Long: "Run by tnf-power-watch.service. Looks at Corosync's links (corosync-cfgtool -s) twice a second, or every 5 s " +
			"while the peer's watch is heard (a datagram every 250 ms between the nodes' addresses, UDP port 9666); once " +
			"every link to the peer is down (its knet heartbeats stopped: a power cut, a hang, a cut cable), reads the peer's " +
			"PowerState through its BMC, one read a second for half a minute, and records the reads in " + powerwatch.Dir +
			" (root's alone). fence_tnf_poweroff takes them when Pacemaker asks it to fence the peer, which Corosync lets it " +
			"do only seconds later: a node that lost its power is then proven off at once. A link down proves nothing by " +
			"itself: only two Off reads a second apart do, both begun after the link was lost, none older than 10 s, and a " +
			"later read of anything but Off cancels them. The record goes when the link comes back.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			w.Node = nc.Peer.Name
			w.Credential = func() (bmc.Credential, error) { return nc.Peer.Credential() }
			w.Down = func(ctx context.Context) (bool, error) { return peerLinksDown(ctx) }
			w.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)).With("component", "power-watch")
			// A stop (systemd's SIGTERM) ends the watch cleanly: its record goes with it.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if h, err := heartbeat(nc, heartbeatPort); err != nil {
				w.Log.Error("no heartbeat with the peer's watch: Corosync's links are looked at every interval", "interval", w.Interval, "err", err)
			} else {
				go h.Serve(ctx, w.Log)
				w.PeerHeard = h.Heard
			}
			return w.Run(ctx)
		},
	}
	cmd.Flags().DurationVar(&w.Interval, "interval", powerwatch.DefaultInterval, "how often Corosync's links are looked at without the peer's heartbeat")
	cmd.Flags().Uint16Var(&heartbeatPort, "heartbeat-port", powerwatch.HeartbeatPort, "the UDP port of the heartbeat between the nodes' watches")
	hide(cmd, "interval", "heartbeat-port")
	return cmd
}

// heartbeat is the watches' heartbeat between the nodes' cluster addresses.
func heartbeat(nc clusterconfig.NodeConfig, port uint16) (*powerwatch.Heartbeat, error) {
	self, err := netip.ParseAddr(nc.Self.IP)
	if err != nil {
		return nil, err
	}
	peer, err := netip.ParseAddr(nc.Peer.IP)
	if err != nil {
		return nil, err
	}
	return &powerwatch.Heartbeat{Self: nc.Self.Name, Peer: nc.Peer.Name,
		Local: netip.AddrPortFrom(self, port), PeerAddress: netip.AddrPortFrom(peer, port)}, nil
}

// peerLinksDown says whether every Corosync link is down towards a node (the peer, on two
// nodes): each is bounded, a Corosync that does not answer is no trigger.
func peerLinksDown(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	links, err := pcmk.Tools{}.Links(ctx)
	if err != nil || len(links) == 0 {
		return false, err
	}
	for _, l := range links {
		if !l.Faulty {
			return false, nil
		}
	}
	return true, nil
}
