package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Known is what the cluster holds now, for the administrator who confirms what is given up and
// for the revision bump.
type Known struct {
	// Served is the etcd cluster this cluster records as served (0: none).
	Served uint64
	// Records are both nodes' published data, by node.
	Records map[string]decision.Data
	// Highest is the highest revision or raft index this cluster is known to have reached.
	Highest uint64
}

// liveTimeout bounds the reads of the etcd that serves now (a cluster whose data is lost has
// none, and the restore must not wait for it).
const liveTimeout = 5 * time.Second

// ReadFacts reads what Check and the description need, on this node, before anything stops.
func (r Runner) ReadFacts(ctx context.Context, nodes map[string]string, snap etcddata.Snapshot, again bool) (Facts, Known, error) {
	cfg, store := r.Config, r.Store
	f := Facts{Self: cfg.Self, Peer: cfg.Peer, Nodes: nodes, Snapshot: snap, Again: again}
	k := Known{Records: map[string]decision.Data{}}
	if state, why := nodesetup.State(); state == nodesetup.StateGuest {
		f.Guest = why
	}
	if installer, err := staticpod.InstallerEtcd(cfg.StaticPodManifest); err != nil {
		f.Installer = err.Error()
	} else if installer {
		f.Installer = cfg.StaticPodManifest + " has an etcd container"
	}
	rec, ok, err := etcdnode.ReadRestore(ctx, store)
	if errors.Is(err, etcdnode.ErrUnreadableRestore) {
		err = fmt.Errorf("%w: written by another release, or by hand; tnfctl restore --abort deletes it", err)
	}
	if err != nil {
		return f, k, err
	}
	if ok {
		f.Recorded = &rec
		m, err := r.Tools.Members(ctx)
		if err != nil {
			return f, k, fmt.Errorf("reading the Corosync membership: %w", err)
		}
		f.RecordedNodeMember = m.Nodes[rec.Node]
		k.Highest = rec.FirstRevision()
	}
	f.Layer = version.Version
	if f.PeerLayer, _, err = store.Get(ctx, cfg.Peer, etcdnode.AttrLayerVersion, attrs.Reboot); err != nil {
		return f, k, err
	}
	if f.EtcdVersion, err = etcdnode.ReadEtcdVersion(ctx, store, cfg.Self); err != nil {
		return f, k, err
	}
	if f.PeerEtcdVersion, err = etcdnode.ReadEtcdVersion(ctx, store, cfg.Peer); err != nil {
		return f, k, err
	}
	st, err := r.Tools.Status(ctx)
	if err != nil {
		return f, k, fmt.Errorf("reading Pacemaker's status: %w", err)
	}
	f.NotManaged = notManaged(st, cfg.Resource)
	f.SnapshotInDataDir = within(snap.Path, cfg.DataDir)
	if f.SnapshotIdentity, f.SnapshotHandover, err = SnapshotObjects(snap); err != nil {
		return f, k, err
	}
	if st, ok, err := handover.ReadState(handover.StateFile); err != nil {
		return f, k, err
	} else if ok {
		f.HandedOver = st.Done()
	}
	if k.Served, err = etcdnode.ReadServed(ctx, store); err != nil {
		return f, k, err
	}
	for _, n := range []string{cfg.Self, cfg.Peer} {
		if k.Records[n], err = etcdnode.ReadRecord(ctx, store, n); err != nil {
			return f, k, err
		}
		k.Highest = max(k.Highest, k.Records[n].Index)
	}
	live, identity := r.readLive(ctx)
	f.LiveIdentity = identity
	k.Highest = max(k.Highest, live)
	if live == 0 {
		// No etcd answers (the cluster's data is lost): this node's data, as it is.
		if rev, err := etcddata.BackendRevision(cfg.DataDir); err == nil {
			k.Highest = max(k.Highest, uint64(max(rev, 0)))
		}
	}
	return f, k, nil
}

// notManaged says why Pacemaker would not stop etcd ("" when it would): its maintenance mode, or
// an instance of etcd unmanaged.
func notManaged(st pcmk.Status, resource string) string {
	if st.MaintenanceMode {
		return "Pacemaker is in maintenance mode (pcs property set maintenance-mode=false)"
	}
	for _, r := range st.Resources {
		if r.ID == resource && r.Unmanaged {
			return fmt.Sprintf("etcd on %s is unmanaged (pcs resource manage %s)", r.Node, r.Clone)
		}
	}
	return ""
}

// within says path is in dir or under it, by their absolute paths.
func within(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readLive reads the etcd that serves now, on either node: the highest revision or raft index
// one of them answers (0: none answers) and the cluster's identity ("": not read).
func (r Runner) readLive(ctx context.Context) (uint64, string) {
	cli, err := r.Client()
	if err != nil {
		return 0, ""
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	var highest uint64
	for _, ip := range []string{r.Config.SelfIP, r.Config.PeerIP} {
		if st, err := cli.Status(ctx, r.Config.ClientURL(ip)); err == nil {
			highest = max(highest, st.RaftIndex, uint64(max(st.Header.Revision, 0)))
		}
	}
	resp, err := cli.Get(ctx, KubeSystemKey, clientv3.WithSerializable())
	if err != nil || len(resp.Kvs) == 0 {
		return highest, ""
	}
	highest = max(highest, uint64(max(resp.Header.Revision, 0)))
	identity, err := NamespaceUID(resp.Kvs[0].Value)
	if err != nil {
		return highest, ""
	}
	return highest, identity
}

// Describe says what the restore gives up and what happens meanwhile, for the administrator who
// must confirm.
func Describe(w io.Writer, f Facts, k Known, bump uint64) {
	s := f.Snapshot
	fmt.Fprintf(w, "Snapshot %s: SHA-256 %s, %s, revision %d, taken of %s.\n",
		s.Path, etcdnode.ShortSum(s.SHA256), units.BytesSize(float64(s.Size)), s.Revision, describeMembers(s.Members))
	if k.Served != 0 {
		fmt.Fprintf(w, "Given up: etcd cluster %x, which this cluster serves, and everything written to it after the snapshot was taken.\n", k.Served)
	} else {
		fmt.Fprintln(w, "Given up: the etcd data both nodes hold now, and everything written after the snapshot was taken.")
	}
	for _, n := range []string{f.Self, f.Peer} {
		fmt.Fprintf(w, "  %s's data (%s) is moved aside beside its data dir, not deleted (the agent's later moves keep backup_count such copies).\n",
			n, recordText(k.Records[n]))
	}
	fmt.Fprintf(w, "Meanwhile etcd stops on %s, then on %s: from then on the API answers nothing until %s serves the restored cluster.\n",
		f.Peer, f.Self, f.Self)
	fmt.Fprintf(w, "Then revisions continue from %d (raised by %d and marked compacted): every client of the API lists again. %s joins as a learner.\n",
		uint64(max(s.Revision, 0))+bump, bump, f.Peer)
	if f.ReassertsHandover() {
		fmt.Fprintln(w, "The snapshot is from before the handover: once the API answers, the restore sets the Etcd object's "+
			"ExternalEtcdReadyForTransition and ExternalEtcdHasCompletedTransition again. Until then the cluster-etcd-operator "+
			"acts on its older state: an etcd container it renders into the static pod is moved out by the static pod guard.")
	}
}

func recordText(d decision.Data) string {
	switch {
	case !d.Known:
		return "nothing published"
	case !d.Present:
		return "no data"
	}
	return "cluster " + strconv.FormatUint(d.ClusterID, 16) + ", raft index " + strconv.FormatUint(d.Index, 10)
}

// NewRecord is the record of a restore from f's snapshot that begins now: its token, the cluster
// ID that token gives this node's member, and whether it sets the handover's conditions again.
func (r Runner) NewRecord(f Facts, k Known, now time.Time) (etcdnode.Restore, error) {
	snap := f.Snapshot
	token := etcddata.NewRestoreToken(now)
	id, err := etcddata.RestoredClusterID(r.Config.Self, r.Config.PeerURL(r.Config.SelfIP), token)
	if err != nil {
		return etcdnode.Restore{}, err
	}
	rec := etcdnode.Restore{Node: r.Config.Self, Snapshot: snap.SHA256, Revision: snap.Revision, Bump: Bump(k.Highest),
		Token: token, Cluster: strconv.FormatUint(id, 16), Step: etcdnode.RestoreStopping, Began: now.UTC(), Since: now.UTC(),
		ReassertHandover: f.ReassertsHandover()}
	if k.Served != 0 {
		rec.GaveUp = strconv.FormatUint(k.Served, 16)
	}
	return rec, nil
}
