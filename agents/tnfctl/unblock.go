package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

func confirmCommand(nf *nodeFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "confirm-peer-down",
		Short: "Confirm the peer is powered off, so this node starts OpenShift alone",
		Example: `  tnfctl confirm-peer-down          # shows what it will do, then asks
  tnfctl confirm-peer-down --yes    # scripts: no question`,
		Long: "For a node that booted alone and waits for its peer, or that runs alone while its peer's fencing keeps failing " +
			"(tnfctl status says so). Refuses while the peer is a Corosync member. Before it asks, it shows what the " +
			"peer's BMC says about its power. " +
			"Otherwise confirms the peer as fenced, cancels Corosync's wait_for_all and makes Pacemaker re-check. " +
			"Only confirm a peer you know is off: if it runs, both nodes may write OpenShift's data.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			peer := nc.Peer.Name
			if _, err := unblock.PeerAway(cmd.Context(), pcmk.Tools{}, peer); err != nil {
				return asRefusal(err)
			}
			if !yes {
				// What the BMC says is evidence for the person who answers; a script has decided.
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", peer, peerPower(cmd.Context(), nc.Peer))
			}
			if err := ask(cmd, yes, fmt.Sprintf("Is %s powered off and will it stay off? Type yes to confirm: ", peer)); err != nil {
				return err
			}
			return asRefusal(unblock.Confirm(cmd.Context(), pcmk.Tools{}, peer, cmd.OutOrStdout()))
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	return cmd
}

// ask asks the administrator on the terminal unless yes (--yes) was given.
func ask(cmd *cobra.Command, yes bool, question string) error {
	if yes {
		return nil
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return errors.New("no terminal to ask on: pass --yes to confirm")
	}
	fmt.Fprint(cmd.OutOrStdout(), question)
	answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if strings.TrimSpace(answer) != "yes" {
		return refused{errors.New("not confirmed")}
	}
	return nil
}

func acceptLossCommand(nf *nodeFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "accept-data-loss",
		Short:   "Let this node lead from etcd data older than its peer's, giving up the peer's newer writes",
		Example: `  tnfctl accept-data-loss           # names what is given up, then asks`,
		Long: "For a site whose peer is gone for good while this node's etcd refuses to lead from data older than " +
			"what the peer last published (tnfctl status says so). Names the writes given up and asks. Refuses while " +
			"the peer is a Corosync member. The agent then restores this node's data as a new etcd cluster of one, with " +
			"revisions raised so clients never see them go back; the peer's data is moved aside when it joins again.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEtcdNodes(nf)
			if err != nil {
				return err
			}
			store := e.agent.Store()
			loss, err := unblock.AssessLoss(cmd.Context(), pcmk.Tools{}, store, e.agent)
			if err != nil {
				return asRefusal(err)
			}
			loss.Describe(cmd.OutOrStdout())
			if err := ask(cmd, yes, fmt.Sprintf("Give up %s's data? Type yes to confirm: ", loss.Peer)); err != nil {
				return err
			}
			if err := loss.Accept(cmd.Context(), store); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "accepted: the etcd agent on %s leads from its data at its next check; tnfctl status shows it\n", loss.Self)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	return cmd
}

func startEmptyCommand(nf *nodeFlags) *cobra.Command {
	var giveUp string
	var yes bool
	cmd := &cobra.Command{
		Use:     "start-empty --give-up CLUSTER_ID",
		Short:   "Let the nodes start a new, empty etcd, giving up the etcd cluster this cluster served",
		Example: `  tnfctl start-empty --give-up 5e1c0a7b9d2f4e61   # the ID tnfctl status names`,
		Long: "For a site where neither node holds its etcd data any more (both data disks replaced or lost) and the etcd " +
			"agents refuse to create a new cluster because this cluster has served one (tnfctl status names its ID). " +
			"Everything OpenShift stored in that cluster is given up. If a data disk only failed to mount, mount it instead: " +
			"the agents then start from it. Deletes the record of the served cluster; the agents create the new cluster at " +
			"their next check.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEtcdNodes(nf)
			if err != nil {
				return err
			}
			store := e.agent.Store()
			if _, err := unblock.NamedServed(cmd.Context(), store, giveUp); err != nil {
				return asRefusal(err)
			}
			if err := ask(cmd, yes, fmt.Sprintf("Give up etcd cluster %s and everything stored in it? Type yes to confirm: ", giveUp)); err != nil {
				return err
			}
			if err := unblock.GiveUpServed(cmd.Context(), store); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "given up: etcd cluster %s; two nodes without data now create a new one at their next check\n", giveUp)
			return nil
		},
	}
	cmd.Flags().StringVar(&giveUp, "give-up", "", "the ID of the etcd cluster given up, in hex (required)")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	_ = cmd.MarkFlagRequired("give-up")
	return cmd
}

func autoUnblockCommand(nf *nodeFlags) *cobra.Command {
	a := unblock.Auto{}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "auto-unblock",
		Short: "If enabled and this node has waited alone long enough, start alone once the peer's BMC proves it off",
		Long: "One pass, run by tnf-auto-unblock.timer. Only with autoUnblock.enabled in cluster.yaml, and only after " +
			"autoUnblock.after of waiting alone (booted alone, or alone with the peer's fencing failing): reads the peer's PowerState twice, a few seconds apart; only two " +
			"answers of exactly Off lead to what confirm-peer-down does. Every decision is logged with its reason. " +
			"Exit 2: the BMC did not prove the peer off.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			a.Config, a.Peer, a.Out = nc.Config, nc.Peer, cmd.OutOrStdout()
			a.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)).With("component", "auto-unblock")
			// A pass that hangs (a tool or a BMC that does not answer) would hold the timer's
			// unit active, and the timer would never start another pass.
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := a.Run(ctx); errors.Is(err, unblock.ErrNotProven) {
				return notProven{err}
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&a.Gap, "gap", 5*time.Second, "time between the two BMC reads")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long one pass may take, all its reads included")
	cmd.Flags().StringVar(&a.StateFile, "state-file", unblock.AloneSinceFile, "where the start of the wait is kept (on /run)")
	hide(cmd, "gap", "state-file")
	return cmd
}
