package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencedrill"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// drillFenceTimeout bounds the fencing itself: the fence delay (10 s at most by default, up to
// clusterconfig.MaxFenceDelay), the first level's refusal of a node that has power, and the
// second level's power off and on through a slow BMC.
const drillFenceTimeout = 5 * time.Minute

func fenceDrillCommand(nf *nodeFlags) *cobra.Command {
	var yes bool
	var kubeconfigPath string
	var timeout, interval time.Duration
	cmd := &cobra.Command{
		Use:   "fence-drill",
		Short: "Fence the peer for real, to prove that this node's fencing of it works, and wait for it to come back",
		Example: `  tnfctl fence-drill          # says what it costs, then asks
  tnfctl fence-drill --yes    # scripts: no question`,
		Long: "Fencing that has never fired is not known to work. Run on one node, a drill reboots the peer through Pacemaker's " +
			"fencing, as a fault would: this node's etcd forces a cluster of one (writes pause for about ten seconds), OpenShift " +
			"runs on this node alone until the peer is back, and the peer's etcd joins again with a full copy of the data. " +
			"It refuses unless tnfctl status says healthy, every fence device checks its BMC's certificate, and MCO rolls " +
			"nothing out on either node (their Node objects, read with --kubeconfig). Once the fencing succeeded it records " +
			"when (the node attribute " + fencedrill.AttrProven + " of the peer; status and the metric " +
			"tnf_fence_proven_timestamp_seconds show it, and the alert TNFFencingNotProven fires when a node's fencing " +
			"was not proven for 90 days); then it waits until both nodes are healthy again. Run it on each node in turn: " +
			"each proves one direction. On the layer's own cluster only.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			self, peer := nc.Self.Name, nc.Peer.Name
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			st := readStatus(ctx, nf)
			facts := fencedrill.Facts{State: st.State, Summary: st.Summary, Guest: st.Guest, UncheckedBMC: st.UncheckedBMC}
			if facts.Guest == "" && facts.State == health.Healthy {
				if facts.Rollout, err = rollout(ctx, kubeconfigPath, self, peer); err != nil {
					return refused{fmt.Errorf("%w: whether MCO rolls a configuration out cannot be read (--kubeconfig): %v", fencedrill.ErrRefused, err)}
				}
			}
			if err := fencedrill.Refusal(facts); err != nil {
				return refused{err}
			}
			fmt.Fprintf(out, "fence-drill: %s fences %s for real (a reboot through its BMC). %s's etcd forces a cluster of one: writes "+
				"pause for about ten seconds, OpenShift runs on %s alone until %s is back, and %s's etcd then copies the whole "+
				"database again.\n", self, peer, self, self, peer, peer)
			if err := ask(cmd, yes, fmt.Sprintf("Fence %s now? Type yes to confirm: ", peer)); err != nil {
				return err
			}
			return drill(ctx, out, self, peer, timeout, interval, func() clusterStatus { return readStatus(ctx, nf) })
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	cmd.Flags().StringVar(&kubeconfigPath, "kubeconfig", recoveryKubeconfig, "the credential the Node objects are read with")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "how long the peer may take to come back and both nodes to be "+
		"healthy again (a bare-metal reboot takes minutes)")
	cmd.Flags().DurationVar(&interval, "interval", 5*time.Second, "how often the wait reads the cluster's state")
	hide(cmd, "interval")
	return cmd
}

// rollout reads both Node objects and says what MCO rolls out on them (fencedrill.Rollout).
func rollout(ctx context.Context, path, self, peer string) (string, error) {
	cfg, err := kubeconfig.Load(path, "tnfctl-fence-drill", 0)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	return fencedrill.Rollout(nodes.Items, []string{self, peer}), nil
}

// drill fences peer, records the proof once the fencing succeeded, and waits, reading the
// cluster's state every interval, until Pacemaker shows the peer gone and then both nodes
// healthy, at most timeout. A failed fencing is the drill's finding: the proof is not recorded.
func drill(ctx context.Context, out io.Writer, self, peer string, timeout, interval time.Duration, read func() clusterStatus) error {
	tools := pcmk.Tools{}
	began := time.Now()
	if err := tools.Fence(ctx, peer, drillFenceTimeout); err != nil {
		return fmt.Errorf("the fencing of %s failed: %w (its fencing does not work; tnfctl fence-check --target %s checks "+
			"its BMC, and Pacemaker's log on %s says which level failed)", peer, err, peer, self)
	}
	fenced := time.Since(began)
	if err := (attrs.CRM{}).Set(ctx, peer, fencedrill.AttrProven, strconv.FormatInt(time.Now().Unix(), 10), attrs.Forever); err != nil {
		return fmt.Errorf("%s was fenced, but the proof could not be recorded: %w", peer, err)
	}
	fmt.Fprintf(out, "fence-drill: %s fenced after %.1f s: %s's fencing of %s is proven\n", peer, fenced.Seconds(), self, peer)
	deadline := time.Now().Add(timeout)
	gone, last := false, ""
	for {
		st := read()
		gone = gone || shownGone(st, peer)
		if gone && st.State == health.Healthy {
			fmt.Fprintf(out, "fence-drill: %s is back and both nodes are healthy, %s after the fencing began\n", peer, time.Since(began).Round(time.Second))
			return nil
		}
		if st.Summary != last {
			fmt.Fprintf(out, "fence-drill: %s: %s\n", time.Since(began).Round(time.Second), st.Summary)
			last = st.Summary
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was fenced, but both nodes are not healthy %s after the fencing (tnfctl status: %s)", peer, timeout, st.Summary)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// shownGone says Pacemaker shows peer offline: after a successful fencing its controller marks
// the fenced node so. A status that cannot be read shows nothing.
func shownGone(st clusterStatus, peer string) bool {
	if st.Pacemaker == nil {
		return false
	}
	for _, n := range st.Pacemaker.Nodes {
		if n.Name == peer {
			return !n.Online
		}
	}
	return false
}
