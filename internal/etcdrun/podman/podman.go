// Package podman runs etcd in a podman container described by OpenShift's external-etcd static
// pod manifest. It is its own package so that the Kubernetes API types it parses stay out of
// binaries that do not run containers.
package podman

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/etcdrun"
)

// Runtime runs etcd in a container whose image, environment and host mounts come from the
// external-etcd static pod manifest, as on a real cluster. The command line is the agent's.
type Runtime struct {
	Binary    string // podman
	Manifest  string
	Container string // container name
}

// ownedEnv are settings the agent passes as flags; the manifest's values for them are dropped so
// that a launch is described by one place only.
var ownedEnv = map[string]bool{
	"ETCD_NAME": true, "ETCD_DATA_DIR": true, "ETCD_INITIAL_CLUSTER": true, "ETCD_INITIAL_CLUSTER_STATE": true,
	"ETCD_LISTEN_CLIENT_URLS": true, "ETCD_ADVERTISE_CLIENT_URLS": true, "ETCD_LISTEN_PEER_URLS": true,
	"ETCD_INITIAL_ADVERTISE_PEER_URLS": true, "ETCD_FORCE_NEW_CLUSTER": true,
}

// etcdContainer reads the manifest and returns its etcd container and the pod's host paths.
func (p Runtime) etcdContainer() (corev1.Container, map[string]string, error) {
	data, err := os.ReadFile(p.Manifest)
	if err != nil {
		return corev1.Container{}, nil, err
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return corev1.Container{}, nil, fmt.Errorf("%s: %w", p.Manifest, err)
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name != "etcd" {
			continue
		}
		if c.Image == "" {
			return c, nil, fmt.Errorf("%s: spec.containers[name=etcd].image is empty", p.Manifest)
		}
		return c, hostPaths, nil
	}
	return corev1.Container{}, nil, fmt.Errorf("%s: spec.containers has no container named etcd", p.Manifest)
}

// RunArgs is the podman command line (without the program name) that launches s.
func (p Runtime) RunArgs(s etcdrun.Spec) ([]string, error) {
	c, hostPaths, err := p.etcdContainer()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--detach", "--replace", "--name=" + p.Container,
		"--network=host", "--privileged", "--security-opt=label=disable",
		"--volume=" + s.DataDir + ":" + s.DataDir}
	for _, m := range c.VolumeMounts {
		host, ok := hostPaths[m.Name]
		// The data dir is mounted above; podman refuses a second mount on the same path.
		if !ok || filepath.Clean(m.MountPath) == filepath.Clean(s.DataDir) {
			continue
		}
		opt := ""
		if m.ReadOnly {
			opt = ":ro"
		}
		args = append(args, "--volume="+host+":"+m.MountPath+opt)
	}
	for _, e := range c.Env {
		if ownedEnv[e.Name] || e.ValueFrom != nil {
			continue
		}
		args = append(args, "--env="+e.Name+"="+e.Value)
	}
	args = append(args, c.Image, "etcd")
	return append(args, s.Args()...), nil
}

func (p Runtime) podman(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, p.Binary, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", p.Binary, args[0], err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
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
	_, err = p.podman(ctx, args...)
	return err
}

func (p Runtime) Running(ctx context.Context) (bool, error) {
	out, err := p.podman(ctx, "container", "inspect", "--format={{.State.Running}}", p.Container)
	if err != nil {
		// No such container is "not running"; podman says so with a non-zero exit.
		return false, nil
	}
	return out == "true", nil
}

// Wait blocks in podman wait until the container exits; a container that is gone or stopped
// returns at once.
func (p Runtime) Wait(ctx context.Context) error {
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
	_, err := p.podman(ctx, "rm", "--force", "--ignore", p.Container)
	return err
}
