package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
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

// defaultStonithTimeout is Pacemaker's stonith-timeout where crm_mon gives none.
const defaultStonithTimeout = 60 * time.Second

// membershipInterval is how often the drill reads Corosync's membership while it waits for the
// peer to leave it: a reboot on a lab machine may bring the peer back within seconds.
const membershipInterval = 100 * time.Millisecond

func fenceDrillCommand(nf *nodeFlags) *cobra.Command {
	var yes bool
	var d drill
	cmd := &cobra.Command{
		Use:   "fence-drill",
		Short: "Fence the peer for real, to prove that this node's fencing of it works, and wait for it to come back",
		Example: `  tnfctl fence-drill          # says what it costs, then asks
  tnfctl fence-drill --yes    # scripts: no question`,
		Long: "Fencing that has never fired is not known to work. Run on one node, a drill reboots the peer through Pacemaker's " +
			"fencing, as a fault would (its levels, delays and stonith-timeout): this node's etcd forces a cluster of one (writes " +
			"pause for about ten seconds), OpenShift runs on this node alone until the peer is back, and the peer's etcd joins again " +
			"with a full copy of the data. It refuses unless tnfctl status says healthy, every fence device checks its BMC's " +
			"certificate, and MCO rolls nothing out on either node (their Node objects, read with --kubeconfig); it checks again " +
			"after the question. The fencing is proven once Pacemaker reports it done and the peer left Corosync's membership " +
			"(a device that powers another machine leaves the peer a member): the drill then records when (the cluster property " +
			"tnf-fence-proven-<peer>; status and the metric tnf_fence_proven_timestamp_seconds show it, and the alert " +
			"TNFFencingNotProven fires when a node's fencing was not proven for 90 days) and waits until both nodes are healthy " +
			"again. Run it on each node in turn: each proves one direction. On the layer's own cluster only.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			d.nf, d.out, d.self, d.peer = nf, cmd.OutOrStdout(), nc.Self.Name, nc.Peer.Name
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			if _, err := d.check(ctx); err != nil {
				return err
			}
			fmt.Fprintf(d.out, "fence-drill: %s fences %s for real (a reboot through its BMC). %s's etcd forces a cluster of one: writes "+
				"pause for about ten seconds, OpenShift runs on %s alone until %s is back, and %s's etcd then copies the whole "+
				"database again.\n", d.self, d.peer, d.self, d.self, d.peer, d.peer)
			if err := ask(cmd, yes, fmt.Sprintf("Fence %s now? Type yes to confirm: ", d.peer)); err != nil {
				return err
			}
			// The answer may come long after the checks.
			st, err := d.check(ctx)
			if err != nil {
				return err
			}
			return d.run(ctx, st)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	cmd.Flags().StringVar(&d.kubeconfig, "kubeconfig", recoveryKubeconfig, "the credential the Node objects are read with")
	cmd.Flags().DurationVar(&d.timeout, "timeout", 30*time.Minute, "how long the peer may take to leave Corosync's membership, "+
		"and then to come back with both nodes healthy (a bare-metal reboot takes minutes)")
	cmd.Flags().DurationVar(&d.interval, "interval", 5*time.Second, "how often the wait reads the cluster's state")
	hide(cmd, "interval")
	return cmd
}

// drill is one run of tnfctl fence-drill: self fences peer.
type drill struct {
	nf                *nodeFlags
	out               io.Writer
	self, peer        string
	kubeconfig        string
	timeout, interval time.Duration
}

// check reads the cluster's state and MCO's, and refuses (exit 3) what fencedrill.Refusal
// refuses.
func (d drill) check(ctx context.Context) (clusterStatus, error) {
	st := readStatus(ctx, d.nf)
	facts := fencedrill.Facts{State: st.State, Summary: st.Summary, Guest: st.Guest, UncheckedBMC: st.UncheckedBMC,
		ConfigurationError: st.ConfigurationError}
	if err := fencedrill.Refusal(facts); err != nil {
		return st, refused{err}
	}
	var err error
	if facts.Rollout, err = rollout(ctx, d.kubeconfig, d.self, d.peer); err != nil {
		return st, refused{fmt.Errorf("%w: whether MCO rolls a configuration out cannot be read with %s (--kubeconfig): %v",
			fencedrill.ErrRefused, d.kubeconfig, err)}
	}
	if err := fencedrill.Refusal(facts); err != nil {
		return st, refused{err}
	}
	return st, nil
}

// rollout reads both Node objects and says what MCO rolls out on them (fencedrill.Rollout).
func rollout(ctx context.Context, path, self, peer string) (string, error) {
	cfg, err := kubeconfig.Load(path, "tnfctl-fence-drill", 0)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("a client of %s: %w", cfg.Host, err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing the Node objects: %w", err)
	}
	return fencedrill.Rollout(nodes.Items, []string{self, peer}), nil
}

// run fences the peer, records the proof once Pacemaker reported the fencing done and the peer
// left Corosync's membership, and waits until both nodes are healthy again, at most d.timeout
// for each wait.
func (d drill) run(ctx context.Context, st clusterStatus) error {
	tools := pcmk.Tools{}
	fenceTimeout := st.Pacemaker.StonithTimeout
	if fenceTimeout <= 0 {
		fenceTimeout = defaultStonithTimeout
	}
	began := time.Now()
	// Watched from before the fencing: a lab machine may be back within seconds of its power-on.
	watch, stopWatch := context.WithTimeout(ctx, d.timeout)
	defer stopWatch()
	left := make(chan time.Time, 1)
	go func() { left <- leftMembership(watch, tools, d.peer) }()
	fmt.Fprintf(d.out, "fence-drill: fencing %s through Pacemaker (its levels and delays; stonith-timeout %s)\n", d.peer, fenceTimeout)
	if err := tools.Fence(ctx, d.peer, fenceTimeout); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while Pacemaker fenced %s: the fencing goes on without this command and nothing "+
				"was recorded; tnfctl status shows its outcome", d.peer)
		}
		// stonith_admin's own wait may end, or it may fail, while the fencer's operation succeeds.
		if p, serr := tools.Status(ctx); serr != nil || !p.Fencing.SucceededAfter(d.peer, began) {
			return fmt.Errorf("the fencing of %s failed: %w. Its fencing does not work: tnfctl fence-check --target %s checks "+
				"its BMC, and Pacemaker's log on %s says which level failed; tnfctl status shows whether %s still runs", d.peer, err, d.peer, d.self, d.peer)
		}
	}
	fenced := time.Since(began)
	at := <-left
	if at.IsZero() {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: Pacemaker reported %s fenced, but it was not seen leaving Corosync's membership; "+
				"nothing was recorded", d.peer)
		}
		return fmt.Errorf("%s was reported fenced after %.1f s, but %s did not leave Corosync's membership within %s: "+
			"its fence devices may power another machine (tnfctl fence-check --target %s checks whose machine its BMC reaches); "+
			"nothing was recorded", d.peer, fenced.Seconds(), d.peer, d.timeout, d.peer)
	}
	if err := (attrs.CRM{}).SetProperty(ctx, fencedrill.PropProven(d.peer), strconv.FormatInt(time.Now().Unix(), 10)); err != nil {
		return fmt.Errorf("%s was fenced, but the proof could not be recorded: %w", d.peer, err)
	}
	fmt.Fprintf(d.out, "fence-drill: %s fenced after %.1f s and out of Corosync's membership after %.1f s: %s's fencing of %s is proven\n",
		d.peer, fenced.Seconds(), at.Sub(began).Seconds(), d.self, d.peer)
	return d.waitHealthy(ctx, began)
}

// waitHealthy reads the cluster's state every d.interval, saying each new state once, until both
// nodes are healthy, at most d.timeout.
func (d drill) waitHealthy(ctx context.Context, began time.Time) error {
	deadline, last := time.Now().Add(d.timeout), ""
	for {
		st := readStatus(ctx, d.nf)
		if st.State == health.Healthy {
			fmt.Fprintf(d.out, "fence-drill: %s is back and both nodes are healthy, %s after the fencing began\n", d.peer, time.Since(began).Round(time.Second))
			return nil
		}
		if st.Summary != last {
			fmt.Fprintf(d.out, "fence-drill: %s: %s\n", time.Since(began).Round(time.Second), st.Summary)
			last = st.Summary
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's fencing is proven and recorded, but the nodes are not both healthy %s after it (tnfctl status: %s); "+
				"if %s does not boot, its BMC's console says why", d.peer, d.timeout, st.Summary, d.peer)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %s's fencing is proven and recorded; tnfctl status shows where its return stands", d.peer)
		case <-time.After(d.interval):
		}
	}
}

// leftMembership reads Corosync's membership every membershipInterval until peer is not a
// member, and says when it saw that; zero when ctx ended first.
func leftMembership(ctx context.Context, tools pcmk.Tools, peer string) time.Time {
	for {
		if m, err := tools.Members(ctx); err == nil && !m.Nodes[peer] {
			return time.Now()
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-time.After(membershipInterval):
		}
	}
}
