package etcdagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// Agent runs one action.
type Agent struct {
	action string // the OCF action's name
	cfg    etcdnode.Config
	env    ocf.Env
	store  attrs.Store
	rt     etcdrun.Runtime
	log    *slog.Logger
	// version is the runtime's etcd version once read (versionRead): a rejoin's start needs it
	// twice (to publish it, and beside the serving peer), and with the podman runtime each read
	// runs a container. Each action is a process of its own; the long-lived watch action only
	// decides once its peer is fenced, where the version is not read.
	version     string
	versionRead bool
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, nil, 0o600)
}

func (a *Agent) selfURL() string { return a.cfg.ClientURL(a.cfg.SelfIP) }
func (a *Agent) peerURL() string { return a.cfg.ClientURL(a.cfg.PeerIP) }

// localStatus is the running local member's status.
func (a *Agent) localStatus(ctx context.Context) (status, error) {
	return a.probe(ctx, a.selfURL())
}

// running says whether this node launched etcd and it is still alive. When the runtime cannot
// tell (podman's own failure: its storage locked, podman killed), a member this agent launched
// that answers its status is alive: the runtime's failure is never reported as etcd's. Without
// the launched marker whatever answers is not this agent's (the installer's etcd, before the
// handover), and the runtime's error stands.
func (a *Agent) running(ctx context.Context) (bool, error) {
	alive, err := a.rt.Running(ctx)
	if err == nil || !exists(a.cfg.LaunchedFile()) {
		return alive, err
	}
	if _, serr := a.localStatus(ctx); serr == nil {
		a.log.Warn("the runtime cannot tell whether etcd runs, but etcd answers: running", "err", err)
		return true, nil
	}
	return false, err
}

// publish writes this node's data record for the peer.
func (a *Agent) publish(ctx context.Context, d decision.Data) error {
	return a.cfg.Publish(ctx, a.store, d)
}

// setScore sets this node's promotion score (< 0 deletes it).
func (a *Agent) setScore(ctx context.Context, score int) error {
	return a.cfg.SetScore(ctx, a.store, score)
}

func leadScore(index uint64) int { return etcdnode.ScoreLeadMin + bits.Len64(index) }

// peerView reads what the peer is now: its live etcd if it answers, else its published record
// and whether its instance is started. fenced says Pacemaker has just told us it stopped (it was
// fenced: the look at its etcd is short, see fencedConnectTimeout).
func (a *Agent) peerView(ctx context.Context, fenced bool) (decision.Peer, decision.Data, error) {
	connect := connectTimeout
	if fenced {
		connect = fencedConnectTimeout
	}
	st, perr := a.probeWithin(ctx, a.peerURL(), connect)
	if perr == nil {
		switch {
		case st.Learner:
			return decision.PeerLearner, fromStatus(st), nil
		case st.serving():
			return decision.PeerVoter, fromStatus(st), nil
		}
		return decision.PeerLeaderless, fromStatus(st), nil
	}
	rec, err := etcdnode.ReadRecord(ctx, a.store, a.cfg.Peer)
	if err != nil {
		return 0, rec, err
	}
	if fenced {
		// Pacemaker's word: whatever answers now is not the etcd that ran.
		return decision.PeerFenced, rec, nil
	}
	if !errors.As(perr, &unreachable{}) {
		a.log.Warn("the peer's etcd client port answers but its status cannot be read", "err", perr)
		return decision.PeerUnknown, rec, nil
	}
	_, started, err := a.store.Get(ctx, a.cfg.Peer, etcdnode.AttrInstance, attrs.Reboot)
	if err != nil {
		return 0, rec, err
	}
	if started {
		return decision.PeerReady, rec, nil
	}
	return decision.PeerAbsent, rec, nil
}

// claimState reads who holds the force-new-cluster claim.
func (a *Agent) claimState(ctx context.Context) (decision.Claim, error) {
	h, err := a.store.Holder(ctx)
	switch {
	case err != nil:
		return 0, err
	case h == "":
		return decision.ClaimNone, nil
	case h == a.cfg.Self:
		return decision.ClaimSelf, nil
	default:
		return decision.ClaimPeer, nil
	}
}

// givenUp reads the record an administrator gave up on node (zero when none): on this node, the
// peer's; on the peer, this node's.
func (a *Agent) givenUp(ctx context.Context, node string) (decision.Data, error) {
	v, ok, err := a.store.Get(ctx, node, etcdnode.AttrGivenUp, attrs.Forever)
	if err != nil || !ok {
		return decision.Data{}, err
	}
	d, err := etcdnode.ParseRecord(v)
	if err != nil {
		return d, fmt.Errorf("%s on %s: %w", etcdnode.AttrGivenUp, node, err)
	}
	return d, nil
}

// counted says whether the serving peer's membership still counts the local member as a voter.
// A member list that cannot be read counts as not counted: the decision is then what it was
// before the handover existed (join as a learner, or refuse).
func (a *Agent) counted(ctx context.Context, memberID uint64) bool {
	cli, err := a.client(ctx, a.peerURL())
	if err == nil {
		defer cli.Close()
		var ids []uint64
		if ids, err = a.voterIDs(ctx, cli); err == nil {
			return slices.Contains(ids, memberID)
		}
	}
	a.log.Warn("reading the peer's member list", "err", err)
	return false
}

// decide gathers the inputs (local data must be stopped, or the installer's etcd's) and decides.
func (a *Agent) decide(ctx context.Context, local decision.Data, installer, fenced bool) (decision.Input, decision.Decision, error) {
	in := decision.Input{Self: a.cfg.Self, PeerName: a.cfg.Peer, Local: local, Installer: installer, Promoted: a.cfg.ReadPromotion()}
	var err error
	if in.PeerContract, err = etcdnode.ReadContract(ctx, a.store, a.cfg.Peer); err != nil {
		return decision.Input{}, decision.Decision{}, err
	}
	// What the peer publishes is read only in a format this agent knows; otherwise the decision
	// is to wait, from the contract alone. The contract is read again after the records, as the
	// term is: a peer writes its contract before its records, so a record of a newer format is
	// never read under an older contract.
	if contract.Readable(in.PeerContract) {
		if err := a.readPeer(ctx, &in, fenced); err != nil {
			return decision.Input{}, decision.Decision{}, err
		}
		if in.PeerContract, err = etcdnode.ReadContract(ctx, a.store, a.cfg.Peer); err != nil {
			return decision.Input{}, decision.Decision{}, err
		}
	}
	// Not after the peer's stop was notified (fenced): a failover must not wait on a restore's
	// record, and a restore's own stop of the peer is a planned one, after which its member has
	// left. A record that cannot be read holds etcd: what the restore does cannot be told.
	if !fenced {
		holding, err := a.restoreHolding(ctx)
		if err != nil {
			holding = "the record of a restore from a snapshot cannot be read (" + err.Error() + "): etcd stays stopped until it can " +
				"(tnfctl restore --abort deletes it)"
		}
		in.Restoring = holding
	}
	// The claim last: the freshest view of who creates a cluster.
	if in.Claim, err = a.claimState(ctx); err != nil {
		return decision.Input{}, decision.Decision{}, err
	}
	d := decision.Decide(in)
	if d.Action == decision.StartBoth && a.alonePromoted(in) {
		a.log.Info("the peer is not promoted in this transition: deciding without the pairs")
		in.Pair, in.PeerPair = decision.Pair{}, decision.Pair{}
		d = decision.Decide(in)
	}
	a.log.Info("decision", "decision", d.Action.String(), "reason", d.Reason, "peer", in.Peer.String(), "claim", in.Claim.String(),
		"installer", installer, "restoring", in.Restoring != "", "counted", in.Counted, "served", fmt.Sprintf("%x", in.Served),
		"local", describeData(local), "peer_data", describeData(in.PeerData), "given_up", describeData(in.GivenUp),
		"peer_gave_up", describeData(in.PeerGaveUp), "peer_contract", in.PeerContract,
		"etcd_version", in.EtcdVersion, "peer_cluster_version", in.PeerClusterVersion, "peer_etcd_version", in.PeerEtcdVersion,
		"pair", etcdnode.FormatPair(in.Pair), "peer_pair", etcdnode.FormatPair(in.PeerPair))
	if d.ReleaseClaim {
		if err := a.store.Release(ctx, a.cfg.Self); err != nil {
			return decision.Input{}, decision.Decision{}, fmt.Errorf("releasing the force-new-cluster claim an earlier run left: %w", err)
		}
		a.log.Warn("released the force-new-cluster claim an earlier run of this node left (it lost its power or was killed holding it)")
	}
	why := ""
	if d.Action == decision.Wait || d.Action == decision.Refuse {
		why = d.Action.String() + ": " + d.Reason
	}
	if err := a.cfg.SetDecision(ctx, a.store, why); err != nil {
		a.log.Warn("publishing the decision for tnfctl status", "err", err)
	}
	return in, d, nil
}

// readPeer fills in what the decision reads of the peer and of the records both nodes write.
func (a *Agent) readPeer(ctx context.Context, in *decision.Input, fenced bool) error {
	var err error
	if in.Peer, in.PeerData, err = a.peerView(ctx, fenced); err != nil {
		return err
	}
	in.Counted = in.Peer == decision.PeerVoter && in.Local.MemberID != 0 && a.counted(ctx, in.Local.MemberID)
	switch {
	case in.Peer == decision.PeerVoter && !in.Counted:
		a.readEtcdVersions(ctx, in)
	case in.Peer == decision.PeerReady:
		if err := a.readPublishedEtcdVersions(ctx, in); err != nil {
			return err
		}
	}
	// Beside an unknown peer too: its member may be one just started beside this node's.
	if in.Peer == decision.PeerReady || in.Peer == decision.PeerUnknown {
		if err := a.readPairs(ctx, in); err != nil {
			return err
		}
	}
	if in.GivenUp, err = a.givenUp(ctx, a.cfg.Self); err != nil {
		return err
	}
	if in.PeerGaveUp, err = a.givenUp(ctx, a.cfg.Peer); err != nil {
		return err
	}
	in.Served, err = etcdnode.ReadServed(ctx, a.store)
	return err
}

// decideStopped reads the local data dir (etcd is not running) and decides.
func (a *Agent) decideStopped(ctx context.Context, fenced bool) (decision.Data, decision.Input, decision.Decision, error) {
	local, installer, err := a.localData(ctx)
	if err != nil {
		return local, decision.Input{}, decision.Decision{}, err
	}
	in, d, err := a.decide(ctx, local, installer, fenced)
	return local, in, d, err
}

// localData reads the local data dir (this agent's etcd is not running), unless the
// installer's etcd still runs from it: the kubelet's static pod has an etcd container (or cannot
// be read), or an etcd this agent did not launch still holds the ports or the data (the kubelet
// stops the container a moment after its manifest dropped it). That data is not this agent's to
// read yet, and installer says so.
func (a *Agent) localData(ctx context.Context) (local decision.Data, installer bool, err error) {
	if a.installerEtcd() {
		return local, true, nil
	}
	local, err = a.inspect(ctx)
	return local, false, err
}

// decideAgain decides once more, on the peer and the claim as they are now and on the local data
// read a moment before by this action: this agent's etcd is stopped, and every action that
// writes the data dir holds this node's action lock, so only the installer's etcd could have
// touched it since, and that is looked at again. Reading the WAL anew (with the mount check)
// cost a failover 0.3 to 0.6 s with 0.1 to 0.5 GiB of WAL.
func (a *Agent) decideAgain(ctx context.Context, local decision.Data, fenced bool) (decision.Decision, error) {
	installer := a.installerEtcd()
	if installer {
		local = decision.Data{}
	}
	_, d, err := a.decide(ctx, local, installer, fenced)
	return d, err
}

// installerEtcd says whether the installer's etcd may still run from the data dir.
func (a *Agent) installerEtcd() bool {
	installer, err := staticpod.InstallerEtcd(a.cfg.StaticPodManifest)
	if err != nil {
		// Counted as the installer's etcd (waiting), not as a failed action: the operator's
		// installer rewrites the manifest in place, and a failure would count against the resource.
		a.log.Warn("counted as the installer's etcd", "err", err)
		return true
	}
	if installer {
		return true
	}
	if port := a.cfg.BusyPort(); port != "" {
		a.log.Info("an etcd this agent did not launch holds its port: waiting until it is gone", "port", port)
		return true
	}
	// Its stop closes the ports before the data: a member launched meanwhile fails at its start.
	switch file, err := etcddata.Held(a.cfg.DataDir); {
	case err != nil:
		a.log.Warn("counted as the installer's etcd", "err", err)
		return true
	case file != "":
		a.log.Info("an etcd this agent did not launch still holds its data: waiting until it is gone", "file", file)
		return true
	}
	return false
}

func describeData(d decision.Data) string {
	switch {
	case !d.Known:
		return "unknown"
	case d.Removed:
		return etcdnode.Record(decision.Data{Known: true, Present: true, ClusterID: d.ClusterID, Index: d.Index}) + " (removed)"
	}
	return etcdnode.Record(d)
}

// inspect reads the local data dir (etcd must be stopped).
func (a *Agent) inspect(ctx context.Context) (decision.Data, error) {
	var info etcddata.Info
	var err error
	if a.cfg.RequireMountpoint {
		err = etcddata.RequireMount(a.cfg.DataDir)
	}
	if err == nil {
		info, err = etcddata.Inspect(a.cfg.DataDir)
	}
	if err != nil {
		// The action fails; tnfctl status says why.
		if serr := a.cfg.SetDecision(ctx, a.store, "refuse: the data dir cannot be read as data or as empty: "+err.Error()); serr != nil {
			a.log.Error("publishing the decision", "err", serr)
		}
		return decision.Data{}, err
	}
	return info.Data(), nil
}

// waitPortsFree waits until nothing listens on this node's etcd ports, so a quick restart does
// not fail with "address already in use".
func (a *Agent) waitPortsFree(ctx context.Context) error {
	busy := ""
	err := poll.Every(ctx, 100*time.Millisecond, func(context.Context) (bool, error) {
		busy = a.cfg.BusyPort()
		return busy == "", nil
	})
	if err != nil {
		return fmt.Errorf("port %s still in use: %w", busy, err)
	}
	return nil
}

// membership is how a launched etcd finds its cluster.
type membership struct {
	initialCluster  map[string]string // member name to peer URL; empty: from the data dir
	clusterState    string            // "new" or "existing", with initialCluster
	forceNewCluster bool
}

var (
	// fromData starts the member the data dir holds.
	fromData = membership{clusterState: "existing"}
	// forcedAlone starts the member the data dir holds as a cluster of one (--force-new-cluster).
	forcedAlone = membership{clusterState: "existing", forceNewCluster: true}
)

// newClusterOf is a new cluster whose only member is this node.
func newClusterOf(name, peerURL string) membership {
	return membership{initialCluster: map[string]string{name: peerURL}, clusterState: "new"}
}

// joining is a member just added to the cluster of the given members.
func joining(members map[string]string) membership {
	return membership{initialCluster: members, clusterState: "existing"}
}

// launch starts etcd as m says and marks it launched.
func (a *Agent) launch(ctx context.Context, m membership) error {
	if err := a.waitPortsFree(ctx); err != nil {
		return err
	}
	spec := etcdrun.Spec{
		Name: a.cfg.Self, DataDir: a.cfg.DataDir,
		ClientURLs: []string{a.selfURL()}, PeerURL: a.cfg.PeerURL(a.cfg.SelfIP),
		InitialCluster: m.initialCluster, ClusterState: m.clusterState, ForceNewCluster: m.forceNewCluster, TLS: a.cfg.TLS,
	}
	// Read before anything is marked: a manifest etcd would refuse stops the launch here.
	electionTimeout, err := a.rt.ElectionTimeout(spec)
	if err != nil {
		return err
	}
	if err := fsutil.RemoveIfExists(a.cfg.FrozenFile()); err != nil {
		return err
	}
	// The agent's etcd runs here from now on: cri-o and kubelet only through Pacemaker.
	if err := fsutil.RemoveIfExists(staticpod.KubeletMarker); err != nil {
		return err
	}
	if err := touch(a.cfg.LaunchedFile()); err != nil {
		return err
	}
	if err := a.cfg.RecordElectionTimeout(electionTimeout); err != nil {
		return err
	}
	if err := a.cfg.RecordLaunchTLS(); err != nil {
		return err
	}
	trust, err := a.cfg.TrustFingerprint()
	if err != nil {
		return err
	}
	if err := os.WriteFile(a.cfg.TrustFile(), []byte(trust), 0o600); err != nil {
		return err
	}
	a.log.Info("launching etcd", "runtime", a.cfg.Runtime, "state", m.clusterState, "force_new_cluster", m.forceNewCluster, "election_timeout", electionTimeout)
	if err := a.rt.Start(ctx, spec); err != nil {
		return err
	}
	a.startWatcher(ctx)
	return nil
}

// reloadTrust restarts a running etcd in place when its CA bundles changed since it was
// launched: the same member on the same data, no leave, no rejoin; the peer rides it out as a
// member that was away for a moment.
func (a *Agent) reloadTrust(ctx context.Context) error {
	if !a.cfg.TrustChanged() {
		return nil
	}
	a.log.Info("the CA bundle changed since etcd started: restarting it in place to trust the new CA")
	if err := a.stopEtcd(ctx, stopGrace); err != nil {
		return err
	}
	if err := a.launch(ctx, fromData); err != nil {
		return err
	}
	_, err := a.waitFor(ctx, "answer after the restart in place", func(status) bool { return true })
	return err
}

// waitFor polls the local member until ok accepts its status or ctx ends. It logs how long it
// waited: with a large database most of a start is etcd receiving it, not the agent.
func (a *Agent) waitFor(ctx context.Context, what string, ok func(status) bool) (status, error) {
	var st status
	var last error
	exited := errors.New("etcd exited")
	began := time.Now()
	defer func() {
		a.log.Info("waited for etcd", "until", what, "waited", time.Since(began).Round(time.Millisecond))
	}()
	err := poll.Every(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		st, err = a.localStatus(ctx)
		if err == nil && ok(st) {
			return true, nil
		}
		if err != nil {
			last = err
		}
		if alive, _ := a.running(ctx); !alive {
			return false, exited
		}
		return false, nil
	})
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, exited):
		return st, fmt.Errorf("etcd exited while waiting until it %s (see %s)", what, a.cfg.LogFile)
	default:
		return st, fmt.Errorf("etcd did not %s in time: %w", what, cmp.Or(last, err))
	}
}

// Stop grace periods: a member that serves gets time to finish requests; one that has lost its
// quorum serves nothing and is crash-safe (etcd syncs its WAL before it acknowledges), so it is
// killed at once to be restarted as a cluster of one without delay.
const (
	stopGrace     = 20 * time.Second
	noQuorumGrace = 0
)

// stopEtcd stops the local etcd and, when this agent had launched it, waits for its ports. An
// instance that never launched etcd does not wait: the ports may be the installer's etcd's,
// which stops only when the handover takes it out, and a stop must not wait for that.
func (a *Agent) stopEtcd(ctx context.Context, grace time.Duration) error {
	if err := a.stopWatcher(ctx); err != nil {
		return err
	}
	launched := exists(a.cfg.LaunchedFile())
	if err := a.rt.Stop(ctx, grace); err != nil {
		return err
	}
	if err := fsutil.RemoveIfExists(a.cfg.LaunchedFile()); err != nil {
		return err
	}
	if !launched {
		return nil
	}
	return a.waitPortsFree(ctx)
}
