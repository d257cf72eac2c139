package etcdagent

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
)

// status is what one member says about itself through the client API.
type status struct {
	ClusterID, MemberID, Leader uint64
	Index, Applied              uint64
	Term                        uint64 // the current term: never below the last entry's
	Learner                     bool
}

// serving is a member of a cluster that has a leader.
func (s status) serving() bool { return s.Leader != 0 }

// client connects to the given endpoints; every request made with it must carry its own
// deadline (see request).
func (a *Agent) client(ctx context.Context, endpoints ...string) (*clientv3.Client, error) {
	return a.dial(ctx, a.cfg.RequestTimeout, endpoints...)
}

// dial connects within timeout: gRPC's handshake, which a frozen etcd never answers although
// the kernel accepts its connections.
func (a *Agent) dial(ctx context.Context, timeout time.Duration, endpoints ...string) (*clientv3.Client, error) {
	tlsc, err := a.cfg.TLSClientConfig()
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: timeout,
		TLS:         tlsc,
		Context:     ctx,
		Logger:      zap.NewNop(),
		// Fail fast instead of waiting for a connection that will not come.
		//lint:ignore SA1019 clientv3 3.5 dials with grpc.DialContext, which honours WithBlock
		DialOptions: []grpc.DialOption{grpc.WithBlock()},
	})
}

// request bounds one etcd call.
func (a *Agent) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.cfg.RequestTimeout)
}

// connectTimeout bounds the TCP connect that precedes a probe: a live node on the same network
// answers in well under a millisecond, and a dead one must not cost a whole request timeout
// (gRPC keeps retrying a refused or silent address until its dial timeout).
const connectTimeout = time.Second

// fencedConnectTimeout bounds that connect to a peer Pacemaker has just fenced: it is off, or
// booting again, and a kernel that is up answers a connect in a millisecond like any live node.
// A powered-off machine answers nothing (the connect times out), and the survivor's etcd waits
// for this look twice (before and after the claim): a second each was most of the time from
// the fencing to the first write.
const fencedConnectTimeout = 100 * time.Millisecond

// probe asks the member at endpoint for its status. Unreachable is reported as an error.
func (a *Agent) probe(ctx context.Context, endpoint string) (status, error) {
	return a.probeWithin(ctx, endpoint, connectTimeout)
}

// probeWithin is probe with the TCP connect bounded by connect.
func (a *Agent) probeWithin(ctx context.Context, endpoint string, connect time.Duration) (status, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return status{}, err
	}
	conn, err := (&net.Dialer{Timeout: min(connect, a.cfg.RequestTimeout)}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		if notListening(err) {
			err = unreachable{err}
		}
		return status{}, err
	}
	conn.Close()
	cli, err := a.dial(ctx, a.cfg.LivenessTimeout, endpoint)
	if err != nil {
		return status{}, err
	}
	defer cli.Close()
	// A status is answered without raft: liveness_timeout bounds it, not a request's deadline.
	rctx, cancel := context.WithTimeout(ctx, a.cfg.LivenessTimeout)
	defer cancel()
	r, err := cli.Status(rctx, endpoint)
	if err != nil {
		return status{}, err
	}
	return status{
		ClusterID: r.Header.ClusterId, MemberID: r.Header.MemberId, Leader: r.Leader,
		Index: r.RaftIndex, Term: r.RaftTerm, Applied: r.RaftAppliedIndex, Learner: r.IsLearner,
	}, nil
}

// unreachable is a probe that found nothing listening: the connect was refused, or found no
// machine at the address (a timeout, no route). Only this reads as "not running"; any other
// failure is something that answers and may serve (decision.PeerUnknown).
type unreachable struct{ error }

func (u unreachable) Unwrap() error { return u.error }

func notListening(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func fromStatus(s status) decision.Data {
	// A status's raft index is its commit index.
	return decision.Data{Known: true, Present: true, ClusterID: s.ClusterID, Index: s.Index, Term: s.Term, Commit: s.Index, Learner: s.Learner}
}

// learnerReady mirrors etcd's own rule for promoting a learner: its log is within 90 % of the
// leader's.
func learnerReady(learner, leader status) bool {
	return float64(learner.Applied) >= 0.9*float64(leader.Index)
}
