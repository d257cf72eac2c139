// Package podman runs etcd in a podman container described by OpenShift's external-etcd static
// pod manifest. It is its own package so that the Kubernetes API types it parses stay out of
// binaries that do not run containers.
package podman

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
)

// Runtime runs etcd in a container whose image, environment, host mounts and further etcd
// flags come from the external-etcd static pod manifest, as on a real cluster. The cluster's
// shape (name, URLs, initial cluster, TLS files, a forced new cluster) is the agent's.
type Runtime struct {
	Binary    string // podman
	Manifest  string
	Container string // container name
	// Main is the container's main process, etcd, as the host sees it: recorded at its start
	// so that whether etcd runs, and when it exits, is read from the kernel. A podman command
	// takes seconds on a loaded node (its storage lock, its start), and the monitor asks every
	// few seconds; podman is asked only where nothing is recorded.
	Main etcdrun.Process
}

// OOMScoreAdj keeps etcd among the last processes the kernel's OOM killer picks, as the field's
// podman-etcd agent does (its oom parameter).
const OOMScoreAdj = -997

// notPassed are flags of the operator's etcd command the runtime leaves out although the agent
// does not own them: --listen-client-http-urls moves etcd's HTTP endpoints, its JSON gateway
// among them, off the client URL the agent's monitor reads.
var notPassed = map[string]bool{"listen-client-http-urls": true}

// envTwin is the environment variable etcd reads for a flag. etcd refuses to start when a flag
// and its twin are both set.
func envTwin(flag string) string {
	return "ETCD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// RunArgs is the podman command line (without the program name) that launches s. Paths in s
// are host paths; etcd gets them as the container sees them.
func (p Runtime) RunArgs(s etcdrun.Spec) ([]string, error) {
	pod, err := LoadPod(p.Manifest)
	if err != nil {
		return nil, err
	}
	mounts := slices.Clone(pod.Mounts)
	// inContainer maps a host path through the manifest's mounts; a path outside them gets its
	// folder mounted at the same place.
	inContainer := func(host, dir string, readOnly bool) string {
		if c, ok := mapPath(mounts, host, func(m Mount) (string, string) { return m.Host, m.Container }); ok {
			return c
		}
		mounts = append(mounts, Mount{Host: dir, Container: dir, ReadOnly: readOnly})
		return host
	}
	s.DataDir = inContainer(s.DataDir, s.DataDir, false)
	if s.TLS != nil {
		t := *s.TLS
		for _, f := range []*string{&t.CertFile, &t.KeyFile, &t.TrustedCAFile, &t.PeerCertFile, &t.PeerKeyFile, &t.PeerTrustedCAFile} {
			*f = inContainer(*f, filepath.Dir(*f), true)
		}
		s.TLS = &t
	}
	// The static pod's other containers and kube-apiserver reach etcd on the loopback address
	// (etcd-readyz: https://localhost:2379); the operator's etcd listens on every address.
	if len(s.ClientURLs) > 0 {
		u, err := url.Parse(s.ClientURLs[0])
		if err != nil {
			return nil, fmt.Errorf("client URL %s: %w", s.ClientURLs[0], err)
		}
		every := "0.0.0.0"
		if strings.Contains(u.Hostname(), ":") {
			every = "::"
		}
		s.ListenClientURLs = []string{u.Scheme + "://" + net.JoinHostPort(every, u.Port())}
	}
	for _, f := range pod.Flags {
		if !etcdrun.OwnedFlags[f.Name] && !notPassed[f.Name] {
			s.ExtraArgs = append(s.ExtraArgs, f.String())
		}
	}
	etcdArgs := s.Args()
	twins := map[string]bool{}
	for name := range etcdrun.OwnedFlags {
		twins[envTwin(name)] = true
	}
	for _, a := range etcdArgs {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		twins[envTwin(name)] = true
	}
	args := []string{"run", "--detach", "--replace", "--name=" + p.Container,
		"--network=host", "--privileged", "--security-opt=label=disable",
		"--oom-score-adj=" + strconv.Itoa(OOMScoreAdj)}
	for _, m := range mounts {
		opt := ""
		if m.ReadOnly {
			opt = ":ro"
		}
		args = append(args, "--volume="+m.Host+":"+m.Container+opt)
	}
	for _, e := range pod.Env {
		if !twins[e.Name] {
			args = append(args, "--env="+e.Name+"="+e.Value)
		}
	}
	// The release's etcd image has ENTRYPOINT /usr/bin/etcd, other images none: name the
	// program, found on the container's PATH as the operator's script finds it.
	args = append(args, "--entrypoint=etcd", pod.Image)
	return append(args, etcdArgs...), nil
}

// ElectionTimeout reads the manifest as RunArgs does: the operator sets the election timeout in
// the container's environment (ETCD_ELECTION_TIMEOUT, 2500 ms for its slower hardware), or
// could as a flag of its etcd command, which RunArgs passes on.
func (p Runtime) ElectionTimeout(s etcdrun.Spec) (time.Duration, error) {
	pod, err := LoadPod(p.Manifest)
	if err != nil {
		return 0, err
	}
	args := s.Args()
	for _, f := range pod.Flags {
		args = append(args, f.String())
	}
	env := make([]string, 0, len(pod.Env))
	for _, e := range pod.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	d, err := etcdrun.ElectionTimeout(args, env)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.Manifest, err)
	}
	return d, nil
}

// Version runs the manifest's image's etcd with --version, in a container of its own without a
// network (the image is in the node's store: nothing is pulled).
func (p Runtime) Version(ctx context.Context) (string, error) {
	pod, err := LoadPod(p.Manifest)
	if err != nil {
		return "", err
	}
	out, err := p.podman(ctx, "run", "--rm", "--network=none", "--pull=never", "--entrypoint=etcd", pod.Image, "--version")
	if err != nil {
		return "", err
	}
	return etcdrun.ParseVersion(out)
}

// VersionKey is the manifest's image: the operator names it by digest, so another image is
// another name.
func (p Runtime) VersionKey() (string, error) {
	pod, err := LoadPod(p.Manifest)
	if err != nil {
		return "", err
	}
	return "podman " + pod.Image, nil
}

func (p Runtime) podman(ctx context.Context, args ...string) (string, error) {
	out, err := command.Run(ctx, p.Binary, args...)
	return strings.TrimSpace(out), err
}

func (p Runtime) Start(ctx context.Context, s etcdrun.Spec) error {
	args, err := p.RunArgs(s)
	if err != nil {
		return err
	}
	// podman refuses to mount a missing folder; etcd run directly makes its data dir itself.
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return err
	}
	// An earlier container's record would say this one is not running.
	if err := p.Main.Forget(); err != nil {
		return err
	}
	if _, err = p.podman(ctx, args...); err != nil {
		return err
	}
	// Without a record (podman did not say, the process already exited) podman is asked.
	if out, err := p.podman(ctx, "container", "inspect", "--format={{.State.Pid}}", p.Container); err == nil {
		if pid, err := strconv.Atoi(out); err == nil && pid > 0 {
			_ = p.Main.Record(pid)
		}
	}
	return nil
}

// Running says whether the container runs: whether its recorded main process is alive, or,
// without a record, what podman says. Only podman's own "no such container" (container exists:
// exit 1) is "not running"; any other failure of podman (its storage locked or broken, podman
// killed) is an error, never a healthy etcd reported as failed.
func (p Runtime) Running(ctx context.Context) (bool, error) {
	if recorded, alive, err := p.Main.Recorded(); err != nil || recorded {
		return alive, err
	}
	if exists, err := p.exists(ctx); err != nil || !exists {
		return false, err
	}
	out, err := p.podman(ctx, "container", "inspect", "--format={{.State.Running}}", p.Container)
	if err != nil {
		// Removed between the two questions (its stop): not running. Anything else is podman's.
		if exists, xerr := p.exists(ctx); xerr == nil && !exists {
			return false, nil
		}
		return false, fmt.Errorf("asking podman whether %s runs: %w", p.Container, err)
	}
	return out == "true", nil
}

// exists asks podman whether the container exists: exit 1 is no, any code but 0 and 1 an error
// of podman's own.
func (p Runtime) exists(ctx context.Context) (bool, error) {
	switch _, err := p.podman(ctx, "container", "exists", p.Container); command.ExitCode(err) {
	case 0:
		return true, nil
	case 1:
		return false, nil
	default:
		return false, fmt.Errorf("asking podman whether %s exists: %w", p.Container, err)
	}
}

// Wait blocks until the container exits: on its recorded main process's pidfd, or, without a
// record, in podman wait. A container that is gone or stopped returns at once, as does one
// podman cannot tell about: the watcher asks the agent's running() again before it reports
// anything.
func (p Runtime) Wait(ctx context.Context) error {
	if recorded, _, err := p.Main.Recorded(); err == nil && recorded {
		return p.Main.Wait(ctx)
	}
	_, err := p.podman(ctx, "wait", p.Container)
	if err != nil && ctx.Err() == nil {
		if running, _ := p.Running(ctx); !running {
			return nil
		}
	}
	return err
}

func (p Runtime) Stop(ctx context.Context, grace time.Duration) error {
	grace = etcdrun.GraceWithin(ctx, grace, 2*time.Second)
	_, _ = p.podman(ctx, "stop", "--ignore", "--time="+strconv.Itoa(int(grace/time.Second)), p.Container)
	if _, err := p.podman(ctx, "rm", "--force", "--ignore", p.Container); err != nil {
		return err
	}
	return p.Main.Forget()
}
