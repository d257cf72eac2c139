package etcdnode

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/certpool"
	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/node/contract"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// Attributes the agent publishes.
const (
	// AttrData (lifetime forever) is the node's data record, for a peer that boots while this
	// node is down.
	AttrData = "tnf-etcd-data"
	// AttrInstance (lifetime reboot) is set while the node's instance is started: the peer is
	// "ready" rather than absent.
	AttrInstance = "tnf-etcd-instance"
	// AttrDecision (lifetime reboot) says why the agent neither leads nor joins, for tnfctl
	// status; it is deleted while the agent leads, joins or serves.
	AttrDecision = "tnf-etcd-decision"
	// AttrGivenUp (lifetime forever) is the peer's data record an administrator gave up on this
	// node (tnfctl accept-data-loss), so this node may lead from older data. The peer deletes it
	// when it joins this node's cluster, moving the given-up data aside.
	AttrGivenUp = "tnf-etcd-given-up"
	// AttrTerm (lifetime forever) is the raft term of the data record's last entry, beside the
	// record so that agents of the previous version, which do not know it, read the record as
	// before. It is written before the record and read after it: a reader may see a term newer
	// than the record (the peer then looks newer: safe), never an older one.
	AttrTerm = "tnf-etcd-term"
	// AttrCommit (lifetime forever) is "<index>:<commit>": the commit index of the member whose
	// data record ends at index (decision.Data.Commit). Bound to the record's index, so a value
	// left by another record (an earlier agent writes none) is never read as this one's. Written
	// before the record, read after it.
	AttrCommit = "tnf-etcd-commit"
	// AttrLayerVersion (lifetime reboot) is the layer version of this node's agent, for tnfctl
	// status during a rolling update. An attribute of its own: the data record's format stays
	// what agents of earlier versions read.
	AttrLayerVersion = "tnf-layer-version"
	// AttrForced (lifetime reboot) counts the clusters of one this node forced since it booted,
	// and when the last one served, for the metrics: a Tally.
	AttrForced = "tnf-etcd-forced"
	// AttrCopiesDropped (lifetime reboot) counts the moved-aside data dirs this node deleted
	// before backup_count asked, to make room for a new member's data, and when the last was:
	// a Tally, for tnfctl status and the metrics.
	AttrCopiesDropped = "tnf-etcd-copies-dropped"
	// AttrEtcdVersion (lifetime reboot) is the version of the etcd this node runs ("3.5.21";
	// empty when it cannot be read), published by the agent's start before its data record: two
	// nodes back with the same data both read both nodes' to agree which leads, and tnfctl status
	// shows it. Agents before 0.3.0 publish none, which their peer reads as not known.
	AttrEtcdVersion = "tnf-etcd-version"
	// AttrPair (lifetime reboot) is "<member-hex>:<other-hex>" when this node's stopped data is a
	// voter of a membership of exactly two voters, that member and the other (decision.Pair), as
	// of the agent's last start, which publishes it before the instance mark. The agent withdraws
	// it before it creates a cluster or joins one, and after the two members found no leader (for
	// the rest of the boot: PairAbandonedFile); each node checks its own against its data. Agents
	// before 0.3.0 publish none.
	AttrPair = "tnf-etcd-pair"
)

// PropServed (a cluster-wide option in the CIB) is the etcd cluster ID, in hex, this Pacemaker
// cluster has served. It outlives both data dirs: with it, two nodes whose data disks did not
// mount never create an empty cluster in its place (decision.Input.Served). tnfctl start-empty
// deletes it, naming what it gives up.
const PropServed = "tnf-etcd-served-cluster"

// ReadServed reads PropServed (0: none recorded).
func ReadServed(ctx context.Context, store attrs.Store) (uint64, error) {
	v, ok, err := store.Property(ctx, PropServed)
	if err != nil || !ok {
		return 0, err
	}
	id, err := strconv.ParseUint(v, 16, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("cluster option %s: %q is not an etcd cluster ID", PropServed, v)
	}
	return id, nil
}

// RecordServed records that this cluster serves the etcd cluster clusterID (PropServed). It reads
// the CIB at most once per cacheFor and writes only a changed value.
func (c Config) RecordServed(ctx context.Context, store attrs.Store, clusterID uint64) error {
	value := strconv.FormatUint(clusterID, 16)
	path := filepath.Join(c.StateDir, "served")
	if fresh(path, value) {
		return nil
	}
	if old, ok, err := store.Property(ctx, PropServed); err != nil {
		return err
	} else if !ok || old != value {
		if err := store.SetProperty(ctx, PropServed, value); err != nil {
			return err
		}
	}
	return c.cache(path, value)
}

// Tally is what a counting attribute holds (AttrForced, AttrCopiesDropped): how many times since
// the node booted, and when the last one was.
type Tally struct {
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
}

// FormatTally is t as a counting attribute holds it: "<count> <unix seconds>".
func FormatTally(t Tally) string { return fmt.Sprintf("%d %d", t.Count, t.Last.Unix()) }

// ParseTally reads the value of the counting attribute attr ("" is none).
func ParseTally(attr, v string) (Tally, error) {
	if v == "" {
		return Tally{}, nil
	}
	var count int
	var last int64
	if n, err := fmt.Sscanf(v, "%d %d", &count, &last); err != nil || n != 2 || count < 0 {
		return Tally{}, fmt.Errorf("node attribute %s: %q is not \"<count> <unix seconds>\"", attr, v)
	}
	return Tally{Count: count, Last: time.Unix(last, 0).UTC()}, nil
}

// Promotion scores. Only a running voter, a caught-up learner, or the one node that may lead
// has a score; see decision.Decide for why at most one node that is not running can lead.
const (
	ScoreVoter   = 1000
	ScoreLearner = 500
	ScoreLeadMin = 100 // plus the bit length of the raft index, so more data scores higher
)

// StartedFile marks the instance started (per boot: state_dir is a tmpfs).
func (c Config) StartedFile() string { return filepath.Join(c.StateDir, "started") }

// WatcherParamsFile holds the reloadable parameters (ReloadableValues) the watcher runs with.
func (c Config) WatcherParamsFile() string { return filepath.Join(c.StateDir, "watcher.params") }

// ReloadableValues are this configuration's values of the reloadable parameters, as one line.
func (c Config) ReloadableValues() string {
	return fmt.Sprintf("backup_count=%d request_timeout=%d liveness_timeout=%d start_both_timeout=%d graceful_leave=%t require_mountpoint=%t",
		c.Backups, int(c.RequestTimeout/time.Second), int(c.LivenessTimeout/time.Second), int(c.StartBothTimeout/time.Second),
		c.GracefulLeave, c.RequireMountpoint)
}

// WatcherStale says whether the watcher runs with other reloadable parameters than this
// configuration's: Pacemaker changed them without a reload-agent that restarted it. A watcher
// started by a version that did not record them is not stale.
func (c Config) WatcherStale() bool {
	data, err := os.ReadFile(c.WatcherParamsFile())
	return err == nil && string(data) != c.ReloadableValues()
}

// LaunchedFile marks that etcd was launched and should be running.
func (c Config) LaunchedFile() string { return filepath.Join(c.StateDir, "launched") }

// FrozenFile marks that the monitor found the launched etcd frozen, so the stop that follows
// kills it at once instead of asking it anything first.
func (c Config) FrozenFile() string { return filepath.Join(c.StateDir, "frozen") }

// PromotedFile holds the local member's promotion as the agent saw it applied on the peer's
// leader (decision.Promotion): "<member hex> <term> <commit index>", per boot.
func (c Config) PromotedFile() string { return filepath.Join(c.StateDir, "promoted") }

// RecordPromotion writes the local member's promotion.
func (c Config) RecordPromotion(p decision.Promotion) error {
	return fsutil.WriteFileAtomic(c.PromotedFile(), fmt.Appendf(nil, "%x %d %d", p.Member, p.Term, p.Index), 0o600)
}

// ReadPromotion reads the local member's promotion. None, or a file that cannot be read, is zero:
// it only ever lets a node lead where it otherwise would not.
func (c Config) ReadPromotion() decision.Promotion {
	data, err := os.ReadFile(c.PromotedFile())
	if err != nil {
		return decision.Promotion{}
	}
	var p decision.Promotion
	if n, err := fmt.Sscanf(string(data), "%x %d %d", &p.Member, &p.Term, &p.Index); err != nil || n != 3 {
		return decision.Promotion{}
	}
	return p
}

// LeaderSeenFile's modification time is the last time the local voter is known to have heard
// from its peer (a monitor saw it with a leader, a LeaderLease earlier): a fencing of the peer
// completed before it cannot explain a later loss of the leader.
func (c Config) LeaderSeenFile() string { return filepath.Join(c.StateDir, "leader-seen") }

// ElectionTimeoutFile holds the election timeout the launched etcd runs with, in milliseconds.
func (c Config) ElectionTimeoutFile() string { return filepath.Join(c.StateDir, "election-timeout") }

// RecordElectionTimeout writes the election timeout etcd is launched with.
func (c Config) RecordElectionTimeout(d time.Duration) error {
	return os.WriteFile(c.ElectionTimeoutFile(), []byte(strconv.FormatInt(d.Milliseconds(), 10)), 0o600)
}

// LeaderLease is how long the local voter can keep reporting a leader after its peer died:
// raft's CheckQuorum steps a leader down, and a follower campaigns, at most two of its election
// timeouts after they last heard from the other (the operator's election timeout is 1000 ms on
// standard hardware, 2500 ms on slower). It is the recorded timeout's; without a record, etcd's
// default's. A leader seen at t proves the peer alive only at t - LeaderLease: a monitor that ran
// just after a fast fencing saw the old leader and took the fencing's proof away, and nothing
// acted.
func (c Config) LeaderLease() time.Duration {
	timeout := etcdrun.DefaultElectionTimeout
	if data, err := os.ReadFile(c.ElectionTimeoutFile()); err == nil {
		if ms, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 32); err == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return 2 * timeout
}

// MarkLeaderSeen records that the local voter has a leader now, so its peer was alive a
// LeaderLease ago.
func (c Config) MarkLeaderSeen() error {
	alive := time.Now().Add(-c.LeaderLease())
	if err := os.Chtimes(c.LeaderSeenFile(), alive, alive); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.WriteFile(c.LeaderSeenFile(), nil, 0o600); err != nil {
		return err
	}
	return os.Chtimes(c.LeaderSeenFile(), alive, alive)
}

// TrustFile keeps the fingerprint of the CA bundles etcd was launched with.
func (c Config) TrustFile() string { return filepath.Join(c.StateDir, "trust-loaded") }

// LaunchTLSFile keeps the TLS files etcd was launched with, for the fast monitor: the podman
// runtime may take them from the pod manifest, which that monitor does not read.
func (c Config) LaunchTLSFile() string { return filepath.Join(c.StateDir, "launch-tls.json") }

// RecordLaunchTLS writes the TLS files etcd is launched with (none: no file).
func (c Config) RecordLaunchTLS() error {
	if c.TLS == nil {
		return fsutil.RemoveIfExists(c.LaunchTLSFile())
	}
	data, err := json.Marshal(c.TLS)
	if err != nil {
		return err
	}
	return os.WriteFile(c.LaunchTLSFile(), data, 0o600)
}

// LaunchedTLS is what RecordLaunchTLS wrote, nil without a record.
func (c Config) LaunchedTLS() *etcdrun.TLS {
	data, err := os.ReadFile(c.LaunchTLSFile())
	if err != nil {
		return nil
	}
	var t etcdrun.TLS
	if json.Unmarshal(data, &t) != nil {
		return nil
	}
	return &t
}

// TrustFingerprint is the SHA-256 of the CA bundles etcd trusts (clients' and peers'), "" when
// TLS is off. etcd re-reads its own certificate and key at every handshake, but reads a CA
// bundle only when it starts: a changed fingerprint means etcd must be restarted to trust the
// new CA (the cluster-etcd-operator rotates its signer by writing a bundle of old and new).
func (c Config) TrustFingerprint() (string, error) {
	if c.TLS == nil {
		return "", nil
	}
	h := sha256.New()
	for _, f := range []string{c.TLS.TrustedCAFile, c.TLS.PeerTrustedCAFile} {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TrustChanged reports whether the CA bundles differ from the ones etcd was launched with.
func (c Config) TrustChanged() bool {
	if c.TLS == nil {
		return false
	}
	loaded, err := os.ReadFile(c.TrustFile())
	if err != nil {
		return false // launched by a version that did not record it: nothing to compare
	}
	now, err := c.TrustFingerprint()
	return err == nil && now != string(loaded)
}

// Record is what a node publishes about its data: "none" or "<cluster-hex>:<index>[:learner]".
// A removed member's data (it left gracefully) is published as "none": it never leads again, and
// a peer that compared indexes with it could wait for it to lead on a tie. The format is
// unchanged, so agents of the previous version read it.
func Record(d decision.Data) string {
	if !d.Present || d.Removed {
		return "none"
	}
	s := strconv.FormatUint(d.ClusterID, 16) + ":" + strconv.FormatUint(d.Index, 10)
	if d.Learner {
		s += ":learner"
	}
	return s
}

// ParseRecord reads a published record.
func ParseRecord(v string) (decision.Data, error) {
	if v == "none" {
		return decision.Data{Known: true}, nil
	}
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "learner") {
		return decision.Data{}, fmt.Errorf("malformed data record %q", v)
	}
	cid, err1 := strconv.ParseUint(parts[0], 16, 64)
	idx, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return decision.Data{}, fmt.Errorf("malformed data record %q", v)
	}
	return decision.Data{Known: true, Present: true, ClusterID: cid, Index: idx, Learner: len(parts) == 3}, nil
}

// cacheFor is how long a written attribute value is trusted to be still in place. Within it,
// a monitor on a quiet cluster spawns no crm_attribute at all; after it, the value is written
// again, in case something removed it from the CIB.
const cacheFor = time.Minute

// setCached writes an attribute unless this node wrote the same value less than cacheFor ago.
func (c Config) setCached(ctx context.Context, store attrs.Store, cache, name, value string, lt attrs.Lifetime) error {
	path := filepath.Join(c.StateDir, cache)
	if fresh(path, value) {
		return nil
	}
	if err := store.Set(ctx, c.Self, name, value, lt); err != nil {
		return err
	}
	return c.cache(path, value)
}

// fresh says the cache file at path holds value and was written less than cacheFor ago.
func fresh(path, value string) bool {
	if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) < cacheFor {
		old, err := os.ReadFile(path)
		return err == nil && string(old) == value
	}
	return false
}

func (c Config) cache(path, value string) error {
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(value), 0o600)
}

// Publish writes this node's data record for the peer, its term first, and the layer and
// contract versions.
func (c Config) Publish(ctx context.Context, store attrs.Store, d decision.Data) error {
	if err := c.setCached(ctx, store, "published-version", AttrLayerVersion, version.Version, attrs.Reboot); err != nil {
		return err
	}
	if err := c.setCached(ctx, store, "published-contract", contract.Attr, strconv.Itoa(contract.Version), attrs.Forever); err != nil {
		return err
	}
	term := ""
	if Record(d) != "none" && d.Term != 0 {
		term = strconv.FormatUint(d.Term, 10)
	}
	if err := c.setCached(ctx, store, "published-term", AttrTerm, term, attrs.Forever); err != nil {
		return err
	}
	commit := ""
	if Record(d) != "none" && d.Commit != 0 {
		commit = strconv.FormatUint(d.Index, 10) + ":" + strconv.FormatUint(d.Commit, 10)
	}
	if err := c.setCached(ctx, store, "published-commit", AttrCommit, commit, attrs.Forever); err != nil {
		return err
	}
	return c.setCached(ctx, store, "published", AttrData, Record(d), attrs.Forever)
}

// ReadRecord reads a node's published data record and then its term and commit index (zero
// when it published none, or is of a previous version).
func ReadRecord(ctx context.Context, store attrs.Store, node string) (decision.Data, error) {
	v, ok, err := store.Get(ctx, node, AttrData, attrs.Forever)
	if err != nil || !ok {
		return decision.Data{}, err
	}
	d, err := ParseRecord(v)
	if err != nil {
		return d, fmt.Errorf("%s's %s: %w", node, AttrData, err)
	}
	if !d.Present {
		return d, nil
	}
	t, ok, err := store.Get(ctx, node, AttrTerm, attrs.Forever)
	if err != nil || !ok {
		return d, err
	}
	if d.Term, err = strconv.ParseUint(t, 10, 64); err != nil {
		return d, fmt.Errorf("%s's %s: %q is not a term", node, AttrTerm, t)
	}
	c, ok, err := store.Get(ctx, node, AttrCommit, attrs.Forever)
	if err != nil || !ok || c == "" {
		return d, err
	}
	index, commit, found := strings.Cut(c, ":")
	i, err1 := strconv.ParseUint(index, 10, 64)
	n, err2 := strconv.ParseUint(commit, 10, 64)
	if !found || err1 != nil || err2 != nil || n > i {
		return d, fmt.Errorf("%s's %s: %q is not <index>:<commit>", node, AttrCommit, c)
	}
	if i == d.Index {
		d.Commit = n
	}
	return d, nil
}

// ReadContract reads the contract version of what node publishes: 1 when it published none,
// contract.Malformed (which no agent reads) when the value is no version. Every reader of the
// peer's records asks this first, so all of them treat a value that is no version alike.
func ReadContract(ctx context.Context, store attrs.Store, node string) (int, error) {
	v, ok, err := store.Get(ctx, node, contract.Attr, attrs.Forever)
	if err != nil {
		return 0, err
	}
	n, err := contract.Parse(v, ok)
	if errors.Is(err, contract.ErrMalformed) {
		return contract.Malformed, nil
	}
	return n, err
}

// PublishEtcdVersion publishes the version of the etcd this node runs ("" deletes it). Not
// through the cache: it is written once per start, and Pacemaker may have cleared it since the
// last (a restart of Pacemaker alone).
func (c Config) PublishEtcdVersion(ctx context.Context, store attrs.Store, v string) error {
	return store.Set(ctx, c.Self, AttrEtcdVersion, v, attrs.Reboot)
}

// FormatPair is a published pair ("" for none).
func FormatPair(p decision.Pair) string {
	if p.Member == 0 || p.Other == 0 {
		return ""
	}
	return strconv.FormatUint(p.Member, 16) + ":" + strconv.FormatUint(p.Other, 16)
}

// ErrMalformedPair: a published pair is not two member IDs.
var ErrMalformedPair = errors.New("not two member IDs")

// ReadPair reads the pair node published (zero when none). One that is no pair is zero with an
// error wrapping ErrMalformedPair, for the log: both nodes read both pairs, so both read it as
// none and decide by the same rules.
func ReadPair(ctx context.Context, store attrs.Store, node string) (decision.Pair, error) {
	v, ok, err := store.Get(ctx, node, AttrPair, attrs.Reboot)
	if err != nil || !ok || v == "" {
		return decision.Pair{}, err
	}
	member, other, found := strings.Cut(v, ":")
	m, err1 := strconv.ParseUint(member, 16, 64)
	o, err2 := strconv.ParseUint(other, 16, 64)
	if !found || err1 != nil || err2 != nil || m == 0 || o == 0 || m == o {
		return decision.Pair{}, fmt.Errorf("%s's %s: %q is %w", node, AttrPair, v, ErrMalformedPair)
	}
	return decision.Pair{Member: m, Other: o}, nil
}

// PublishPair publishes this node's pair (zero withdraws it). Not through the cache, as the etcd
// version: it is written at a start, and withdrawn before a change that would make it false.
func (c Config) PublishPair(ctx context.Context, store attrs.Store, p decision.Pair) error {
	return store.Set(ctx, c.Self, AttrPair, FormatPair(p), attrs.Reboot)
}

// PairAbandonedFile marks that this node's peer did not start its member beside this one's
// (decision.StartBoth) in this boot: the start publishes no pair again until the next boot.
func (c Config) PairAbandonedFile() string { return filepath.Join(c.StateDir, "pair-abandoned") }

// ReadEtcdVersion reads the version of the etcd node published ("" when none).
func ReadEtcdVersion(ctx context.Context, store attrs.Store, node string) (string, error) {
	v, _, err := store.Get(ctx, node, AttrEtcdVersion, attrs.Reboot)
	return v, err
}

// SetDecision publishes why the agent waits or refuses ("" deletes it).
func (c Config) SetDecision(ctx context.Context, store attrs.Store, why string) error {
	return c.setCached(ctx, store, "decision", AttrDecision, why, attrs.Reboot)
}

// SetScore sets this node's promotion score; a negative score deletes it.
func (c Config) SetScore(ctx context.Context, store attrs.Store, score int) error {
	v := ""
	if score >= 0 {
		v = strconv.Itoa(score)
	}
	return c.setCached(ctx, store, "score", attrs.PromotionName(c.Resource), v, attrs.Reboot)
}

// TLSClientConfig is what the agent presents to etcd: the peer certificate, trusted by
// trusted_ca_file. Built with crypto/tls directly to keep etcd's transport package (and its
// logging stack) out of the fast monitor.
func (c Config) TLSClientConfig() (*tls.Config, error) {
	if c.TLS == nil {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLS.PeerCertFile, c.TLS.PeerKeyFile)
	if err != nil {
		return nil, err
	}
	pool, err := certpool.Load(c.TLS.TrustedCAFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
