// Package fastmonitor answers the etcd agent's monitor of a healthy voter without the full agent:
// ocf-etcd runs it before it would exec tnf-etcd-agent, so it links no etcd, gRPC or
// Kubernetes package (ocf-etcd's TestEntryPointStaysLean checks).
package fastmonitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// gatewayStatus is the JSON of etcd's gRPC gateway for Maintenance.Status (uint64s as strings).
type gatewayStatus struct {
	Header struct {
		ClusterID string `json:"cluster_id"`
		MemberID  string `json:"member_id"`
	} `json:"header"`
	Leader    string `json:"leader"`
	RaftIndex string `json:"raftIndex"`
	RaftTerm  string `json:"raftTerm"`
	IsLearner bool   `json:"isLearner"`
}

// Run answers the monitor of the common case, a started voter with a leader, in a few
// milliseconds: one status read through etcd's JSON gateway (the gRPC client would cost more to
// start than the whole check), then the record and the score, written only when they changed.
// A launched member that does not answer its status within liveness_timeout is frozen: that is
// a failure, reported at once (to stderr, which Pacemaker logs) rather than waited out again by
// the full agent. Anything else (not started, a learner, no leader, a refused connection, an
// error, a CA bundle that changed since etcd started) is not handled here: handled is false and
// the full agent decides.
func Run(env ocf.Env, stderr io.Writer) (st ocf.Status, handled bool) {
	c, err := etcdnode.LoadConfig(env)
	if err != nil {
		return 0, false
	}
	if c.TLS == nil {
		c.TLS = c.LaunchedTLS()
	}
	// Only a member this agent launched is its to report: an etcd it did not launch answering on
	// the same address (the installer's, before the handover) is the full agent's to decide on.
	if _, err := os.Stat(c.StartedFile()); err != nil || c.TrustChanged() || c.WatcherStale() {
		return 0, false
	}
	if _, err := os.Stat(c.LaunchedFile()); err != nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.LivenessTimeout)
	defer cancel()
	ctx, endRead := context.WithCancelCause(ctx)
	defer endRead(nil)
	go endWhenMarkedFrozen(ctx, endRead, c.FrozenFile())
	s, err := readStatus(ctx, c)
	if err != nil && errors.Is(context.Cause(ctx), errMarkedFrozen) {
		fmt.Fprintf(stderr, "ocf:tnf:etcd: etcd did not answer its status within %s: frozen (found so already: %s)\n", c.LivenessTimeout, c.FrozenFile())
		return ocf.ErrGeneric, true
	}
	if isFrozen(err) {
		fmt.Fprintf(stderr, "ocf:tnf:etcd: etcd did not answer its status within %s: frozen (%v)\n", c.LivenessTimeout, err)
		if err := os.WriteFile(c.FrozenFile(), nil, 0o600); err != nil {
			fmt.Fprintf(stderr, "ocf:tnf:etcd: marking etcd frozen: %v\n", err)
		}
		return ocf.ErrGeneric, true
	}
	if err != nil || s.IsLearner || s.Leader == "" || s.Leader == "0" {
		return 0, false
	}
	cid, err1 := strconv.ParseUint(s.Header.ClusterID, 10, 64)
	idx, err2 := strconv.ParseUint(s.RaftIndex, 10, 64)
	term, err3 := strconv.ParseUint(s.RaftTerm, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, false
	}
	store := c.Store()
	if err := c.Publish(ctx, store, decision.Data{Known: true, Present: true, ClusterID: cid, Index: idx, Term: term, Commit: idx}); err != nil {
		return 0, false
	}
	if err := c.SetScore(ctx, store, etcdnode.ScoreVoter); err != nil {
		return 0, false
	}
	if err := c.MarkLeaderSeen(); err != nil {
		return 0, false
	}
	if err := c.RecordServed(ctx, store, cid); err != nil {
		return 0, false
	}
	return ocf.RunningPromoted, true
}

// errMarkedFrozen ends a monitor's status read: the watcher (or an earlier monitor) found the
// member frozen.
var errMarkedFrozen = errors.New("marked frozen")

// frozenMarkPoll is how often a monitor's status read looks for the watcher's frozen mark.
const frozenMarkPoll = 50 * time.Millisecond

// endWhenMarkedFrozen ends the read (end) once the watcher has marked the member frozen, or at
// once if it (or an earlier monitor) already had. Pacemaker runs one operation of a resource at
// a time: a monitor still waiting out liveness_timeout on a member the watcher already reported
// would hold back the recovery, and the peer's cluster of one, by up to that long.
func endWhenMarkedFrozen(ctx context.Context, end context.CancelCauseFunc, mark string) {
	t := time.NewTicker(frozenMarkPoll)
	defer t.Stop()
	for {
		if _, err := os.Stat(mark); err == nil {
			end(errMarkedFrozen)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Frozen reads the local member's status once: err nil when it answered, frozen when it did
// not within liveness_timeout (the monitor's rule, for the agent's watcher, which reads every
// half second).
func Frozen(c etcdnode.Config) (frozen bool, err error) {
	if c.TLS == nil {
		c.TLS = c.LaunchedTLS()
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.LivenessTimeout)
	defer cancel()
	_, err = readStatus(ctx, c)
	return isFrozen(err), err
}

// isFrozen says the status read timed out: the member accepted the connection (the kernel does
// that for a stopped process too) but did not answer.
func isFrozen(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// readStatus reads the local member's status through the gateway.
func readStatus(ctx context.Context, c etcdnode.Config) (gatewayStatus, error) {
	tlsConf, err := c.TLSClientConfig()
	if err != nil {
		return gatewayStatus{}, err
	}
	// One read per connection: the watcher reads every half second for as long as etcd runs, and
	// kept-alive connections of a transport made per read would pile up.
	client := &http.Client{Timeout: c.LivenessTimeout, Transport: &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, "POST", c.ClientURL(c.SelfIP)+"/v3/maintenance/status", bytes.NewReader([]byte("{}")))
	if err != nil {
		return gatewayStatus{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return gatewayStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return gatewayStatus{}, fmt.Errorf("status: %s", resp.Status)
	}
	var s gatewayStatus
	return s, json.NewDecoder(resp.Body).Decode(&s)
}
