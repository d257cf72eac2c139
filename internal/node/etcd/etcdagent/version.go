package etcdagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/version"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
)

// readEtcdVersions fills in what the decision's etcd-version rule reads beside a serving peer:
// the version of the etcd this node runs and the cluster version the peer's member reports.
// What cannot be read stays empty: the rule does not apply, and etcd's own check refuses a
// member too old for its cluster.
func (a *Agent) readEtcdVersions(ctx context.Context, in *decision.Input) {
	in.EtcdVersion = a.etcdVersion(ctx)
	var err error
	if in.PeerClusterVersion, err = a.peerClusterVersion(ctx); err != nil {
		a.log.Warn("reading the peer's etcd cluster version", "err", err)
	}
}

// peerClusterVersion is the cluster version the peer's member serves ("3.6.0"): etcd's /version,
// which the gRPC API does not carry.
func (a *Agent) peerClusterVersion(ctx context.Context) (string, error) {
	tlsc, err := a.cfg.TLSClientConfig()
	if err != nil {
		return "", err
	}
	rctx, cancel := a.request(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, a.peerURL()+"/version", nil)
	if err != nil {
		return "", err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsc}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v version.Versions
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s/version: %s", a.peerURL(), resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return "", fmt.Errorf("%s/version: %w", a.peerURL(), err)
	}
	return v.Cluster, nil
}

// versionBound bounds reading the etcd's version: the podman runtime runs a container for it.
const versionBound = 20 * time.Second

// etcdVersion is the version of the etcd this node runs, "" when it cannot be read (logged);
// read once per action, and run (etcd --version, in a container with podman) only once per
// binary or image: kept in the state dir under the runtime's VersionKey. A podman run costs
// seconds on a loaded node, and the monitor of a node that refuses beside its peer reads it.
func (a *Agent) etcdVersion(ctx context.Context) string {
	if a.versionRead {
		return a.version
	}
	a.versionRead = true
	key, err := a.rt.VersionKey()
	if err == nil {
		if kept, err := os.ReadFile(a.versionFile()); err == nil {
			if k, v, ok := strings.Cut(strings.TrimSpace(string(kept)), "\n"); ok && k == key {
				a.version = v
				return v
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, versionBound)
	defer cancel()
	v, verr := a.rt.Version(ctx)
	if verr != nil {
		a.log.Warn("reading the version of this node's etcd", "err", verr)
	}
	a.version = v
	if verr == nil && err == nil {
		if err := fsutil.WriteFileAtomic(a.versionFile(), []byte(key+"\n"+v+"\n"), 0o600); err != nil {
			a.log.Warn("keeping the version of this node's etcd", "err", err)
		}
	}
	return v
}

// versionFile keeps the version etcdVersion read, under its key.
func (a *Agent) versionFile() string { return filepath.Join(a.cfg.StateDir, "etcd-version") }

// publishEtcdVersion publishes the version of the etcd this node runs, for the tie-break and
// tnfctl status. One that cannot be read is published as not known (the tie then goes by name on
// both nodes alike); only a failure to publish fails.
func (a *Agent) publishEtcdVersion(ctx context.Context) error {
	return a.cfg.PublishEtcdVersion(ctx, a.store, a.etcdVersion(ctx))
}

// readPublishedEtcdVersions fills in what the tie-break reads beside a ready peer: the etcd
// versions both nodes published, so that both compare the same two values.
func (a *Agent) readPublishedEtcdVersions(ctx context.Context, in *decision.Input) (err error) {
	if in.EtcdVersion, err = etcdnode.ReadEtcdVersion(ctx, a.store, a.cfg.Self); err != nil {
		return err
	}
	in.PeerEtcdVersion, err = etcdnode.ReadEtcdVersion(ctx, a.store, a.cfg.Peer)
	return err
}
