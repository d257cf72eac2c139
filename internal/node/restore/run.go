package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Runner carries a restore out on the node that runs it.
type Runner struct {
	Config etcdnode.Config
	Store  attrs.Store
	Tools  pcmk.Tools
	// Snapshot is the snapshot file's path.
	Snapshot string
	// Wait bounds each step's wait (etcd stopping, the restored cluster serving, the peer
	// joining); Interval is how often a waiting step looks again.
	Wait, Interval time.Duration
	Out            io.Writer
	// Client is an etcd client on both nodes' endpoints, with the agent's credentials.
	Client func() (*clientv3.Client, error)
	// Operator is the API the handover's conditions are set again through, in a restore that
	// re-asserts them (nil in any other).
	Operator handover.API
	// StopAt stops the run as soon as it has recorded that step, as a crash there would: for
	// the tests of a restore resumed from each step.
	StopAt string
}

// ErrStopped is the end of a run that StopAt stopped.
var ErrStopped = errors.New("stopped as asked")

// clone is the etcd resource's clone, whose target-role keeps etcd stopped on both nodes, and
// whose ban keeps it off the peer.
func (r Runner) clone() string { return r.Config.Resource + "-clone" }

// Run carries rec out from its step on and records each step as it begins: a restore run again
// resumes at the step it had reached, and each step may be done again from its start.
func (r Runner) Run(ctx context.Context, rec etcdnode.Restore) error {
	steps := map[string]func(context.Context, *etcdnode.Restore) error{
		etcdnode.RestoreStopping: r.stop, etcdnode.RestoreRestoring: r.restore, etcdnode.RestoreStarting: r.start,
		etcdnode.RestoreHandover: r.reassertHandover,
	}
	order := rec.Steps()
	i := slices.Index(order, rec.Step)
	if i < 0 {
		return fmt.Errorf("the recorded restore is at step %q, which this layer does not know", rec.Step)
	}
	for _, step := range order[i:] {
		if err := r.enter(ctx, &rec, step); err != nil {
			return err
		}
		if step == r.StopAt {
			return fmt.Errorf("at step %s: %w", step, ErrStopped)
		}
		if err := steps[step](ctx, &rec); err != nil {
			return fmt.Errorf("step %s: %w (tnfctl restore with the same snapshot resumes it here)", step, err)
		}
	}
	return r.enter(ctx, &rec, etcdnode.RestoreDone)
}

// Abort ends the recorded restore (CheckAbort allowed it, or its record cannot be read): etcd
// given back to Pacemaker on both nodes, as before the restore, and only then the record
// deleted, so that an abort cut short holds etcd still and is run again.
func (r Runner) Abort(ctx context.Context) error {
	for _, node := range []string{r.Config.Self, r.Config.Peer} {
		if err := r.Tools.Clear(ctx, r.clone(), node); err != nil {
			return err
		}
	}
	if err := r.Tools.SetTargetRole(ctx, r.clone(), ""); err != nil {
		return err
	}
	if err := etcdnode.EndRestore(ctx, r.Store); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "etcd given back to Pacemaker on both nodes (%s's bans and target-role removed), the restore's record deleted\n", r.clone())
	return nil
}

// Open records rec as the restore under way, unless the record has changed since before was
// read (nil: there was none): a restore begun on the peer while this one asked.
func (r Runner) Open(ctx context.Context, rec etcdnode.Restore, before *etcdnode.Restore) error {
	now, ok, err := etcdnode.ReadRestore(ctx, r.Store)
	if err != nil {
		return err
	}
	if ok != (before != nil) || ok && (now.Token != before.Token || now.Step != before.Step) {
		return fmt.Errorf("another restore was recorded while this one asked (tnfctl status): %w", ErrUnderWay)
	}
	return etcdnode.WriteRestore(ctx, r.Store, rec)
}

// enter records rec at step, from now.
func (r Runner) enter(ctx context.Context, rec *etcdnode.Restore, step string) error {
	if rec.Step != step || rec.Since.IsZero() {
		rec.Step, rec.Since = step, time.Now().UTC()
	}
	rec.Waiting = ""
	return r.record(ctx, *rec)
}

// record writes rec, unless another run has taken the restore over meanwhile (a restore begun on
// the peer while this node had left the membership: ErrUnderWay). The CIB has no compare and
// swap for a cluster option: a takeover between the read and the write is not seen, and the
// other run refuses at its own next write.
func (r Runner) record(ctx context.Context, rec etcdnode.Restore) error {
	now, ok, err := etcdnode.ReadRestore(ctx, r.Store)
	if err != nil {
		return err
	}
	if !ok || now.Node != rec.Node || now.Token != rec.Token {
		return fmt.Errorf("the restore recorded in the CIB is no longer this one (tnfctl status): %w", ErrUnderWay)
	}
	return etcdnode.WriteRestore(ctx, r.Store, rec)
}

// waitFor polls check until it says nothing is left to wait for (""), within r.Wait. What it
// last waited for is recorded only when the wait gives up, for tnfctl status on either node: a
// write of a cluster option aborts Pacemaker's transition in flight, and one in each change of
// the reason held etcd's stops and starts back (a start of one node's instance ran alone, its
// peer's deferred to the next transition).
func (r Runner) waitFor(ctx context.Context, rec *etcdnode.Restore, what string, check func(context.Context) string) error {
	wctx, cancel := context.WithTimeout(ctx, r.Wait)
	defer cancel()
	fmt.Fprintf(r.Out, "restore: waiting for %s\n", what)
	began := time.Now()
	waiting := ""
	err := poll.Every(wctx, r.Interval, func(ctx context.Context) (bool, error) {
		waiting = check(ctx)
		return waiting == "", nil
	})
	if err != nil {
		rec.Waiting = waiting
		if werr := r.record(ctx, *rec); werr != nil {
			err = errors.Join(err, werr)
		}
		return fmt.Errorf("waiting for %s: %w (%s)", what, err, waiting)
	}
	fmt.Fprintf(r.Out, "restore: waited %s for %s\n", since(began), what)
	return nil
}

// since is the time since t, as the restore's lines give it.
func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }

// stop takes etcd out of Pacemaker's hands, the peer's first, as pcs resource ban and disable
// do, and waits until it runs nowhere and this node's data is free: an etcd that is stopped this
// way makes no peer force a cluster and nothing is fenced (the agent's planned stop). The peer
// first: its member leaves while this node's serves alone, so the API is without etcd only from
// this node's stop on, not through both.
func (r Runner) stop(ctx context.Context, rec *etcdnode.Restore) error {
	peer := r.Config.Peer
	if err := r.Tools.Ban(ctx, r.clone(), peer); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: etcd taken out of Pacemaker's hands on %s (%s kept off it)\n", peer, r.clone())
	if err := r.waitFor(ctx, rec, "etcd to stop on "+peer, func(ctx context.Context) string {
		return r.running(ctx, peer)
	}); err != nil {
		return err
	}
	return r.holdStopped(ctx, rec)
}

// holdStopped takes etcd out of Pacemaker's hands on both nodes (the peer's ban, the clone's
// target-role=Stopped: both may be set again) and waits until it runs nowhere.
func (r Runner) holdStopped(ctx context.Context, rec *etcdnode.Restore) error {
	if err := r.Tools.Ban(ctx, r.clone(), r.Config.Peer); err != nil {
		return err
	}
	if err := r.Tools.SetTargetRole(ctx, r.clone(), "Stopped"); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: etcd taken out of Pacemaker's hands on %s too (%s target-role=Stopped)\n", r.Config.Self, r.clone())
	return r.waitFor(ctx, rec, "etcd to stop on both nodes", r.stopped)
}

// stopped says why etcd may still run, on either node, or this node's data be in use ("" when
// neither).
func (r Runner) stopped(ctx context.Context) string {
	if why := r.running(ctx, ""); why != "" {
		return why
	}
	if port := r.Config.BusyPort(); port != "" {
		return "port " + port + " is still in use on " + r.Config.Self
	}
	if file, err := etcddata.Held(r.Config.DataDir); err != nil || file != "" {
		return fmt.Sprintf("etcd's data on %s is still held (%s%v)", r.Config.Self, file, errOrNil(err))
	}
	return ""
}

// running says where Pacemaker runs etcd, on node ("" any), or why that cannot be read ("" when
// it runs nowhere).
func (r Runner) running(ctx context.Context, node string) string {
	st, err := r.Tools.Status(ctx)
	if err != nil {
		return "Pacemaker's status: " + err.Error()
	}
	var running []string
	for _, res := range st.Resources {
		if res.ID == r.Config.Resource && res.Role != "Stopped" && (node == "" || res.Node == node) {
			running = append(running, res.Role+" on "+res.Node)
		}
	}
	if len(running) > 0 {
		return "etcd runs: " + strings.Join(running, ", ")
	}
	return ""
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

// restore restores the snapshot into this node's data dir (unless it already holds the restored
// cluster: the step run again), then records the restored cluster for both agents: it is the
// served one; the peer's data, of the cluster given up, is given up whole, so that the peer's
// agent moves it aside and joins (decision.Input.PeerGaveUp) and this node's leads beside it
// (GivenUp); the records of the old cluster that name members (the pairs) and an earlier
// acceptance go, as does a claim left; this node's new data is published.
func (r Runner) restore(ctx context.Context, rec *etcdnode.Restore) error {
	// Run again from here, the step holds etcd again if it must (an administrator may have given
	// it back between two runs) and checks the file is the one checked.
	if why := r.stopped(ctx); why != "" {
		fmt.Fprintf(r.Out, "restore: %s: holding etcd stopped again\n", why)
		if err := r.holdStopped(ctx, rec); err != nil {
			return err
		}
	}
	if why := etcddata.SnapshotIs(r.Snapshot, rec.Snapshot); why != "" {
		return errors.New(why)
	}
	began := time.Now()
	info, err := etcddata.Inspect(r.Config.DataDir)
	if err != nil || !info.Present || strconv.FormatUint(info.ClusterID, 16) != rec.Cluster {
		res, err := etcddata.RestoreSnapshot(r.Snapshot, r.Config.DataDir, r.Config.Self, r.Config.PeerURL(r.Config.SelfIP), rec.Token, rec.Bump, time.Now())
		if err != nil {
			return err
		}
		if res.Backup != "" {
			fmt.Fprintf(r.Out, "restore: %s's data moved aside to %s (kept)\n", r.Config.Self, res.Backup)
		}
		if info, err = etcddata.Inspect(r.Config.DataDir); err != nil {
			return err
		}
	}
	if got := strconv.FormatUint(info.ClusterID, 16); got != rec.Cluster {
		return fmt.Errorf("%s holds etcd cluster %s after the restore, not %s", r.Config.DataDir, got, rec.Cluster)
	}
	// First: a takeover from the peer after a power cut here gives up what this node holds.
	if err := r.Config.Publish(ctx, r.Store, info.Data()); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: the snapshot restored on %s as etcd cluster %s (revision %d, raised by %d) in %s\n",
		r.Config.Self, rec.Cluster, rec.Revision, rec.Bump, since(began))
	self, peer := r.Config.Self, r.Config.Peer
	if err := r.Store.SetProperty(ctx, etcdnode.PropServed, rec.Cluster); err != nil {
		return err
	}
	peerData, err := etcdnode.ReadRecord(ctx, r.Store, peer)
	if err != nil {
		return err
	}
	gaveUp, err := r.gaveUp(peerData, rec)
	if err != nil {
		return err
	}
	givenUp := ""
	if gaveUp != 0 {
		givenUp = etcdnode.Record(decision.Data{Known: true, Present: true, ClusterID: gaveUp, Index: math.MaxUint64})
	}
	for _, a := range []struct {
		node, name, value string
		lt                attrs.Lifetime
	}{
		{self, etcdnode.AttrGivenUp, givenUp, attrs.Forever},
		{peer, etcdnode.AttrGivenUp, "", attrs.Forever},
		{self, etcdnode.AttrPair, "", attrs.Reboot},
		{peer, etcdnode.AttrPair, "", attrs.Reboot},
		{self, etcdnode.AttrDecision, "", attrs.Reboot},
		{peer, etcdnode.AttrDecision, "", attrs.Reboot},
	} {
		if err := r.Store.Set(ctx, a.node, a.name, a.value, a.lt); err != nil {
			return err
		}
	}
	if holder, err := r.Store.Holder(ctx); err != nil {
		return err
	} else if holder != "" {
		if err := r.Store.Release(ctx, holder); err != nil {
			return err
		}
	}
	if givenUp != "" {
		fmt.Fprintf(r.Out, "restore: %s's data (cluster %x) given up: its agent moves it aside and joins\n", peer, gaveUp)
	}
	// Failures of the old data (a start that failed on it) would keep Pacemaker from starting
	// etcd again where they count.
	return r.Tools.Cleanup(ctx, r.clone())
}

// start gives etcd back to Pacemaker on this node first, then on the peer, and waits until this
// node serves the restored cluster as its voter, then until the peer has joined it and been
// promoted; a peer that is not a Corosync member joins when it is back. One at a time because
// both instances started in one transition wait for each other's start (the agent's rule for two
// nodes back at once), which a transition aborted in between (an attribute written) turns into a
// wait of 20 s for a start that comes only after.
func (r Runner) start(ctx context.Context, rec *etcdnode.Restore) error {
	self, peer := r.Config.Self, r.Config.Peer
	cli, err := r.Client()
	if err != nil {
		return err
	}
	defer cli.Close()
	// The peer stays banned until this node serves; run again from here once it does, the step
	// must not ban the peer again, which would stop its join.
	if r.serving(ctx, cli, self, r.Config.SelfIP, rec.Cluster) != "" {
		// One left on this node by a restore begun on the peer goes.
		if err := r.Tools.Clear(ctx, r.clone(), self); err != nil {
			return err
		}
		if err := r.Tools.Ban(ctx, r.clone(), peer); err != nil {
			return err
		}
	}
	if err := r.Tools.SetTargetRole(ctx, r.clone(), ""); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: etcd given back to Pacemaker on %s (%s target-role removed, kept off %s until it serves)\n", self, r.clone(), peer)
	if err := r.waitFor(ctx, rec, self+" to serve the restored cluster", func(ctx context.Context) string {
		return r.serving(ctx, cli, self, r.Config.SelfIP, rec.Cluster)
	}); err != nil {
		return err
	}
	if err := r.Tools.Clear(ctx, r.clone(), peer); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: %s serves etcd cluster %s; etcd given back to Pacemaker on %s\n", self, rec.Cluster, peer)
	m, err := r.Tools.Members(ctx)
	if err != nil {
		return fmt.Errorf("reading the Corosync membership: %w", err)
	}
	if !m.Nodes[peer] {
		fmt.Fprintf(r.Out, "restore: %s is not a Corosync member: its agent moves its data aside and joins when it is back\n", peer)
		return nil
	}
	if err := r.waitFor(ctx, rec, peer+" to join the restored cluster", func(ctx context.Context) string {
		return r.serving(ctx, cli, peer, r.Config.PeerIP, rec.Cluster)
	}); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: %s joined etcd cluster %s and is a voter\n", peer, rec.Cluster)
	return nil
}

// reassertHandover sets the handover's conditions again in the Etcd object the snapshot brought
// back, once the API answers: without them the cluster-etcd-operator would render its etcd
// container into the static pod again (the static pod guard moves such a manifest out
// meanwhile) and manage the etcd membership. A condition already True stays as it is.
func (r Runner) reassertHandover(ctx context.Context, rec *etcdnode.Restore) error {
	if r.Operator == nil {
		return errors.New("no API to set the handover's conditions through")
	}
	conditions := [][3]string{
		{handover.ConditionReady, handover.ReasonReady, "set again by tnfctl restore of a snapshot from before the handover"},
		{handover.ConditionCompleted, handover.ReasonCompleted, "set again by tnfctl restore: Pacemaker runs etcd on both nodes"},
	}
	if err := r.waitFor(ctx, rec, "the API to take the handover's conditions", func(ctx context.Context) string {
		if err := r.Operator.Ready(ctx); err != nil {
			return "the API is not ready: " + err.Error()
		}
		for _, c := range conditions {
			if err := r.Operator.SetTrue(ctx, c[0], c[1], c[2]); err != nil {
				return "setting " + c[0] + ": " + err.Error()
			}
		}
		return ""
	}); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "restore: the Etcd object records the handover again (%s, %s)\n", handover.ConditionReady, handover.ConditionCompleted)
	return nil
}

// serving says why node's etcd does not serve cluster as a promoted voter with a leader ("" when
// it does).
func (r Runner) serving(ctx context.Context, cli *clientv3.Client, node, ip, cluster string) string {
	st, err := r.Tools.Status(ctx)
	if err != nil {
		return "Pacemaker's status: " + err.Error()
	}
	if role := st.Role(r.Config.Resource, node); role != "Promoted" {
		return fmt.Sprintf("etcd on %s is %s in Pacemaker", node, orNone(role))
	}
	rctx, cancel := context.WithTimeout(ctx, r.Config.RequestTimeout)
	defer cancel()
	s, err := cli.Status(rctx, r.Config.ClientURL(ip))
	switch {
	case err != nil:
		return fmt.Sprintf("etcd on %s: %v", node, err)
	case strconv.FormatUint(s.Header.ClusterId, 16) != cluster:
		return fmt.Sprintf("etcd on %s serves cluster %x", node, s.Header.ClusterId)
	case s.IsLearner || s.Leader == 0:
		return fmt.Sprintf("etcd on %s is a learner or has no leader", node)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "not running"
	}
	return s
}

// gaveUp is the cluster the restore gives up on the peer (0: none, its data is the restored
// cluster's): the one its data holds, or, with no record of it (the peer's data never
// published), the one served before the restore.
func (r Runner) gaveUp(peerData decision.Data, rec *etcdnode.Restore) (uint64, error) {
	switch {
	case peerData.Present && strconv.FormatUint(peerData.ClusterID, 16) == rec.Cluster:
		return 0, nil
	case peerData.Present:
		return peerData.ClusterID, nil
	case rec.GaveUp == "":
		return 0, nil
	}
	id, err := strconv.ParseUint(rec.GaveUp, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("cluster option %s: gaveUp %q: %w", etcdnode.PropRestore, rec.GaveUp, err)
	}
	return id, nil
}
