// Package etcdrun starts, watches and stops the local etcd member as a supervised process
// (runtime "exec"); package podman runs it as a container (runtime "podman").
package etcdrun

import (
	"context"
	"strings"
	"time"
)

// GraceWithin shortens grace so that a forced stop still fits before ctx ends.
func GraceWithin(ctx context.Context, grace, reserve time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-reserve < grace {
		return max(time.Until(dl)-reserve, 0)
	}
	return grace
}

// TLS holds the certificate files; when set, client and peer traffic both use TLS with client
// certificate authentication.
type TLS struct {
	CertFile, KeyFile, TrustedCAFile             string
	PeerCertFile, PeerKeyFile, PeerTrustedCAFile string
}

// Spec is one launch of etcd. Its flags are computed for every launch, so a one-shot flag such
// as --force-new-cluster never outlives the launch that needed it.
type Spec struct {
	Name             string
	DataDir          string
	ClientURLs       []string // advertised, and listened on unless ListenClientURLs is set
	ListenClientURLs []string
	PeerURL          string // listen and advertise
	InitialCluster   map[string]string
	ClusterState     string // "new" or "existing"
	ForceNewCluster  bool
	TLS              *TLS
	// ExtraArgs are further etcd flags (--name=value), none of them an OwnedFlags one.
	ExtraArgs []string
}

// OwnedFlags are the etcd flags a Spec sets, in some launches or in all: a runtime that takes
// flags or environment from elsewhere (podman: the static pod manifest) leaves these to the
// agent.
var OwnedFlags = map[string]bool{
	"name": true, "data-dir": true, "listen-client-urls": true, "advertise-client-urls": true,
	"listen-peer-urls": true, "initial-advertise-peer-urls": true, "initial-cluster": true,
	"initial-cluster-state": true, "force-new-cluster": true,
	"cert-file": true, "key-file": true, "trusted-ca-file": true, "client-cert-auth": true,
	"peer-cert-file": true, "peer-key-file": true, "peer-trusted-ca-file": true, "peer-client-cert-auth": true,
}

// Args is the etcd command line (without the program name).
func (s Spec) Args() []string {
	clients := strings.Join(s.ClientURLs, ",")
	listen := clients
	if len(s.ListenClientURLs) > 0 {
		listen = strings.Join(s.ListenClientURLs, ",")
	}
	args := []string{
		"--name=" + s.Name,
		"--data-dir=" + s.DataDir,
		"--listen-client-urls=" + listen,
		"--advertise-client-urls=" + clients,
		"--listen-peer-urls=" + s.PeerURL,
		"--initial-advertise-peer-urls=" + s.PeerURL,
	}
	if len(s.InitialCluster) > 0 {
		args = append(args, "--initial-cluster="+initialCluster(s.InitialCluster), "--initial-cluster-state="+s.ClusterState)
	}
	if s.ForceNewCluster {
		args = append(args, "--force-new-cluster")
	}
	if t := s.TLS; t != nil {
		args = append(args,
			"--cert-file="+t.CertFile, "--key-file="+t.KeyFile, "--trusted-ca-file="+t.TrustedCAFile, "--client-cert-auth",
			"--peer-cert-file="+t.PeerCertFile, "--peer-key-file="+t.PeerKeyFile, "--peer-trusted-ca-file="+t.PeerTrustedCAFile,
			"--peer-client-cert-auth")
	}
	return append(args, s.ExtraArgs...)
}

func initialCluster(m map[string]string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sortStrings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + m[n]
	}
	return strings.Join(parts, ",")
}

// Runtime runs one etcd member on this node.
type Runtime interface {
	// Start launches etcd in the background and returns once it is launched.
	Start(ctx context.Context, s Spec) error
	// Running reports whether the launched etcd is still alive.
	Running(ctx context.Context) (bool, error)
	// Stop ends etcd: politely for up to grace (less if ctx ends sooner), then by force.
	// Stopping a stopped etcd succeeds.
	Stop(ctx context.Context, grace time.Duration) error
	// Wait blocks until the launched etcd exits (returns at once when it is not running) or
	// ctx ends.
	Wait(ctx context.Context) error
	// ElectionTimeout is the election timeout etcd launched with s runs with.
	ElectionTimeout(s Spec) (time.Duration, error)
	// Version is the version of the etcd this runtime launches ("3.5.21").
	Version(ctx context.Context) (string, error)
	// VersionKey names what Version reads without running it (the binary as it is on disk, the
	// image): a version read once is kept under it, since a podman run may take seconds on a
	// loaded node and the version of one etcd never changes.
	VersionKey() (string, error)
}
