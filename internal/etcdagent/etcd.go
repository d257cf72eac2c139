package etcdagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/tnf-layer/tnf-layer/internal/decision"
	"github.com/tnf-layer/tnf-layer/internal/etcddata"
)

// status is what one member says about itself through the client API.
type status struct {
	ClusterID, MemberID, Leader uint64
	Index, Applied              uint64
	Learner                     bool
}

// serving is a member of a cluster that has a leader.
func (s status) serving() bool { return s.Leader != 0 }

func (c Config) tlsConfig() (*tls.Config, error) {
	if c.TLS == nil {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: c.TLS.PeerCertFile, KeyFile: c.TLS.PeerKeyFile, TrustedCAFile: c.TLS.TrustedCAFile}
	return info.ClientConfig()
}

// client connects to the given endpoints; every request made with it must carry its own
// deadline (see request).
func (c Config) client(ctx context.Context, endpoints ...string) (*clientv3.Client, error) {
	tlsc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: c.RequestTimeout,
		TLS:         tlsc,
		Context:     ctx,
		Logger:      zap.NewNop(),
		// Fail fast instead of waiting for a connection that will not come.
		DialOptions: []grpc.DialOption{grpc.WithBlock()},
	})
}

// request bounds one etcd call.
func (c Config) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.RequestTimeout)
}

// connectTimeout bounds the TCP connect that precedes a probe: a live node on the same network
// answers in well under a millisecond, and a dead one must not cost a whole request timeout
// (gRPC keeps retrying a refused or silent address until its dial timeout).
const connectTimeout = time.Second

// probe asks the member at endpoint for its status. Unreachable is reported as an error.
func (c Config) probe(ctx context.Context, endpoint string) (status, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return status{}, err
	}
	conn, err := (&net.Dialer{Timeout: min(connectTimeout, c.RequestTimeout)}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return status{}, err
	}
	conn.Close()
	cli, err := c.client(ctx, endpoint)
	if err != nil {
		return status{}, err
	}
	defer cli.Close()
	rctx, cancel := c.request(ctx)
	defer cancel()
	r, err := cli.Status(rctx, endpoint)
	if err != nil {
		return status{}, err
	}
	return status{
		ClusterID: r.Header.ClusterId, MemberID: r.Header.MemberId, Leader: r.Leader,
		Index: r.RaftIndex, Applied: r.RaftAppliedIndex, Learner: r.IsLearner,
	}, nil
}

// record is what a node publishes about its data for its peer: "none" or "<cluster-hex>:<index>".
func record(d decision.Data) string {
	if !d.Present {
		return "none"
	}
	s := strconv.FormatUint(d.ClusterID, 16) + ":" + strconv.FormatUint(d.Index, 10)
	if d.Learner {
		s += ":learner"
	}
	return s
}

func parseRecord(v string) (decision.Data, error) {
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

func fromInfo(i etcddata.Info) decision.Data {
	return decision.Data{Known: true, Present: i.Present, ClusterID: i.ClusterID, Index: i.Index, Learner: i.Learner}
}

func fromStatus(s status) decision.Data {
	return decision.Data{Known: true, Present: true, ClusterID: s.ClusterID, Index: s.Index, Learner: s.Learner}
}

// learnerReady mirrors etcd's own rule for promoting a learner: its log is within 90 % of the
// leader's.
func learnerReady(learner, leader status) bool {
	return float64(learner.Applied) >= 0.9*float64(leader.Index)
}
