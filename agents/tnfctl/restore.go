package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/restore"
)

// recoveryKubeconfig is the control plane node's own administrator credential for the local API
// server, which OpenShift's recovery procedures use: a restore of a snapshot from before the
// handover sets the handover's conditions with it, as nothing else on the node may (the
// handover's own credential is removed once the handover is done).
const recoveryKubeconfig = "/etc/kubernetes/static-pod-resources/kube-apiserver-certs/secrets/node-kubeconfigs/localhost-recovery.kubeconfig"

// restoreLock keeps two restores from running on one node at once.
const restoreLock = "/run/tnf/restore.lock"

// lockRestore takes restoreLock, or refuses at once while another restore holds it.
func lockRestore(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(restoreLock), 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	unlock, err := fsutil.Lock(ctx, restoreLock)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, refused{fmt.Errorf("another tnfctl restore runs on this node: %w", restore.ErrUnderWay)}
	}
	return unlock, err
}

func restoreCommand(nf *nodeFlags) *cobra.Command {
	var yes, again, abort, beforeHandover bool
	var kubeconfig string
	// Its waits are for Pacemaker's view, a crm_mon each time: a few milliseconds.
	r := restore.Runner{Interval: 250 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "restore {SNAPSHOT | --abort}",
		Short: "Replace the cluster's etcd data by a snapshot (etcdctl snapshot save's), on both nodes",
		Example: `  tnfctl restore /var/home/core/backup/snapshot_2026-11-30_120000.db   # says what is given up, then asks
  tnfctl restore /var/home/core/backup/snapshot_2026-11-30_120000.db --yes   # run again after a crash: resumes
  tnfctl restore --abort   # a restore still stopping etcd: give etcd back instead`,
		Long: "For a cluster whose etcd data is lost or corrupted on both nodes, or that must go back to an earlier state. " +
			"Run it on one node; that node's etcd serves the restored data, and the peer joins it. It checks the snapshot " +
			"first (its integrity hash, that it is of this cluster and, after the handover, from after it, unless --before-handover " +
			"accepts an older one, whose Etcd object then gets the handover's conditions again once the API answers) and stops " +
			"nothing when a check fails. Then it names what is given up and asks; takes etcd out of Pacemaker's hands on both nodes " +
			"(no fencing, no failover meanwhile); moves this node's data aside (kept) and restores the snapshot as a new etcd " +
			"cluster of one, its revisions raised and marked compacted, so that no client sees a revision go back; records " +
			"it as the cluster's served etcd cluster, giving up the old one; and gives etcd back to Pacemaker: the peer's " +
			"agent moves its data aside (kept) and joins as a learner. tnfctl status on either node shows where it stands. " +
			"Interrupted (a crash, a reboot, a timeout), it resumes where it stood when run again with the same snapshot; " +
			"run again once it has ended, it does nothing. Only where the layer configured Pacemaker: on a guest, the " +
			"cluster-etcd-operator's cluster-restore.sh is the restore.",
		Args: func(cmd *cobra.Command, args []string) error {
			if abort {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			nc, err := nf.load()
			if err != nil {
				return err
			}
			e, err := etcdNodesOf(nf.config, nc)
			if err != nil {
				return err
			}
			unlock, err := lockRestore(cmd.Context())
			if err != nil {
				return err
			}
			defer unlock()
			r.Config, r.Store, r.Tools, r.Client, r.Out = e.agent, e.agent.Store(), pcmk.Tools{}, e.client, cmd.OutOrStdout()
			if abort {
				return abortRestore(cmd.Context(), r)
			}
			r.Snapshot = args[0]
			began := time.Now()
			snap, err := etcddata.ReadSnapshot(args[0])
			if err != nil {
				return asRefusal(err)
			}
			nodes := map[string]string{}
			for _, n := range nc.Config.Nodes {
				nodes[n.Name] = n.IP
			}
			facts, known, err := r.ReadFacts(cmd.Context(), nodes, snap, again)
			if err != nil {
				return err
			}
			facts.BeforeHandover = beforeHandover
			plan, err := restore.Check(facts)
			if err != nil {
				return asRefusal(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restore: the snapshot and the cluster checked in %s\n", time.Since(began).Round(10*time.Millisecond))
			var rec etcdnode.Restore
			switch plan {
			case restore.Nothing:
				fmt.Fprintf(cmd.OutOrStdout(), "nothing to do: the cluster was restored from this snapshot at %s (--again restores it once more)\n",
					facts.Recorded.Since.UTC().Format(time.RFC3339))
				return nil
			case restore.Resume:
				rec = *facts.Recorded
				fmt.Fprintf(cmd.OutOrStdout(), "resuming the restore begun at %s, at step %s\n", rec.Began.Format(time.RFC3339), rec.Step)
			case restore.Begin:
				if rec, err = r.NewRecord(facts, known, time.Now()); err != nil {
					return err
				}
			}
			if rec.ReassertHandover {
				if r.Operator, err = handover.NewOperator(kubeconfig); err != nil {
					return refused{fmt.Errorf("--kubeconfig, the credential the handover's conditions are set again with: %w", err)}
				}
			}
			if plan == restore.Begin {
				restore.Describe(cmd.OutOrStdout(), facts, known, rec.Bump)
				if err := ask(cmd, yes, "Restore etcd from this snapshot? Type yes to confirm: "); err != nil {
					return err
				}
				if err := r.Open(cmd.Context(), rec, facts.Recorded); err != nil {
					return asRefusal(err)
				}
			}
			if err := r.Run(cmd.Context(), rec); err != nil {
				return asRefusal(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored: etcd cluster %s serves the snapshot's data. As after OpenShift's own restore, roll the "+
				"control plane's static pods out again: oc patch kubeapiserver cluster, kubecontrollermanager cluster and kubescheduler "+
				"cluster with spec.forceRedeploymentReason (operate.md, \"Restoring etcd from a snapshot\").\n", rec.Cluster)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask (for scripts)")
	cmd.Flags().BoolVar(&again, "again", false, "restore from the snapshot last restored once more")
	cmd.Flags().BoolVar(&abort, "abort", false, "abort the restore under way while it is at its first step, stopping etcd (no "+
		"data replaced yet), or delete a record this layer cannot read: etcd goes back to Pacemaker on both nodes")
	cmd.Flags().BoolVar(&beforeHandover, "before-handover", false, "accept a snapshot taken before the handover from the "+
		"installer's etcd: once the API answers, the restore sets the handover's conditions in the Etcd object again")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", recoveryKubeconfig, "the credential that sets the handover's conditions "+
		"again (only with --before-handover, and a snapshot from before the handover)")
	cmd.MarkFlagsMutuallyExclusive("abort", "again")
	cmd.MarkFlagsMutuallyExclusive("abort", "before-handover")
	cmd.Flags().StringVar(&r.StopAt, "stop-at", "", "stop once this step is recorded, as a crash there would")
	cmd.Flags().DurationVar(&r.Wait, "timeout", 15*time.Minute, "how long each step may wait (etcd stopping, the restored cluster "+
		"serving, the peer joining with the whole database)")
	hide(cmd, "stop-at")
	return cmd
}

// abortRestore aborts the recorded restore, where restore.CheckAbort allows it, or deletes a
// record this layer cannot read (which holds etcd stopped on both nodes: the agents' own rules
// then decide on whatever data each node holds, as after any stop).
func abortRestore(ctx context.Context, r restore.Runner) error {
	rec, ok, err := etcdnode.ReadRestore(ctx, r.Store)
	if errors.Is(err, etcdnode.ErrUnreadableRestore) {
		fmt.Fprintf(r.Out, "%v: deleting it\n", err)
		return r.Abort(ctx)
	}
	if err != nil {
		return err
	}
	recorded, member := (*etcdnode.Restore)(nil), false
	if ok {
		recorded = &rec
		m, err := r.Tools.Members(ctx)
		if err != nil {
			return fmt.Errorf("reading the Corosync membership: %w", err)
		}
		member = m.Nodes[rec.Node]
	}
	if err := restore.CheckAbort(recorded, r.Config.Self, member); err != nil {
		return asRefusal(err)
	}
	fmt.Fprintf(r.Out, "aborting the restore on %s at step %s: no data was replaced\n", rec.Node, rec.Step)
	return r.Abort(ctx)
}
