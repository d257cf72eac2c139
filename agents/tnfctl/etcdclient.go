package main

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun/podman"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
)

// etcdNodes is this node's etcd agent configuration and both nodes' client endpoints, for the
// commands that ask etcd itself (gather, metrics) or read what its agent publishes.
type etcdNodes struct {
	agent     etcdnode.Config
	endpoints []string
}

// loadEtcdNodes reads the node configuration's etcd settings.
func loadEtcdNodes(nf *nodeFlags) (etcdNodes, error) {
	nc, err := nf.load()
	if err != nil {
		return etcdNodes{}, err
	}
	return etcdNodesOf(nf.config, nc)
}

// etcdNodesOf is loadEtcdNodes for a node configuration already read from file.
func etcdNodesOf(file string, nc clusterconfig.NodeConfig) (etcdNodes, error) {
	agent, err := etcdnode.ConfigOf(nc.Self.Name, nc.Config.NodeIPMap(), nc.Config.Resources.Etcd)
	if err != nil {
		return etcdNodes{}, fmt.Errorf("%s: resources.etcd: %w", file, err)
	}
	// The podman runtime without TLS parameters: the certificates of the pod manifest's etcd, as
	// the agent takes them; the files etcd was launched with while the manifest is unusable (the
	// operator's installer rewrites it).
	if err := podman.ConfigTLS(&agent); err != nil {
		if agent.TLS = agent.LaunchedTLS(); agent.TLS == nil {
			return etcdNodes{}, fmt.Errorf("resources.etcd: runtime podman: %w", err)
		}
	}
	e := etcdNodes{agent: agent}
	for _, n := range nc.Config.Nodes {
		e.endpoints = append(e.endpoints, agent.ClientURL(n.IP))
	}
	return e, nil
}

// client is an etcd client on both nodes' endpoints, with the agent's credentials.
func (e etcdNodes) client() (*clientv3.Client, error) { return e.clientOf(e.endpoints...) }

// clientOf is an etcd client on the given endpoints, with the agent's credentials.
func (e etcdNodes) clientOf(endpoints ...string) (*clientv3.Client, error) {
	tlsConfig, err := e.agent.TLSClientConfig()
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// etcdRequestTimeout bounds one request to etcd from gather.
const etcdRequestTimeout = 5 * time.Second

// membersTimeout bounds the metrics' member list: a serving member answers in milliseconds, and
// a node where none runs (inert, booting) must not hold each scrape for long.
const membersTimeout = 2 * time.Second

// members counts the voting members and the learners, from whichever node answers.
func (e etcdNodes) members(ctx context.Context) (*metrics.EtcdMembers, error) {
	cli, err := e.client()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, membersTimeout)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	m := countMembers(list.Members)
	return &m, nil
}

// countMembers counts the voting members and the learners of a member list.
func countMembers(members []*etcdserverpb.Member) metrics.EtcdMembers {
	var m metrics.EtcdMembers
	for _, member := range members {
		if member.IsLearner {
			m.Learners++
		} else {
			m.Voters++
		}
	}
	return m
}
