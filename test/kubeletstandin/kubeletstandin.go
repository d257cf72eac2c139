// Package kubeletstandin is a stand-in for the kubelet's part in the handover tests (the real
// kubelet needs cri-o and a container image): it runs the etcd container of the
// cluster-etcd-operator's static pod manifest as that container would run, and stops it when the
// manifest no longer has it. The cluster tests run it inside each node; the boot tests build
// cmd/tnf-kubelet-standin into the guests' disk.
package kubeletstandin

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
)

// LogPrefix starts each of its log lines; Stopping ends the line it logs as it sends etcd
// SIGTERM, Stopped the one once etcd has exited.
const (
	LogPrefix = "stand-in kubelet: "
	Stopping  = "stopping the etcd container: the manifest no longer has it"
	Stopped   = "stopped the etcd container"
)

// Run is `tnf-kubelet-standin MANIFEST`. While the static pod manifest has an etcd container it
// runs that container's command and args, and starts it again when it exits; once the manifest
// has none (the operator rolled out a revision without it) or is gone, it stops it as the kubelet
// stops a container: SIGTERM, then SIGKILL after the pod's grace period. The pod's other
// containers are not run: nothing here reads them. A manifest that cannot be read (being
// replaced) changes nothing.
func Run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: tnf-kubelet-standin MANIFEST")
	}
	log.SetPrefix(LogPrefix)
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	var etcd *exec.Cmd
	exited := make(chan struct{})
	running := func() bool {
		select {
		case <-exited:
			return false
		default:
			return etcd != nil
		}
	}
	// 200 ms apart, about 11 hours: far beyond any scenario; the node's power ends it first.
	for range 200_000 {
		pod, err := staticpod.Read(args[0])
		i := staticpod.EtcdIndex(pod)
		// A manifest removed is a pod removed: the kubelet stops it.
		gone := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !gone:
			log.Print(err)
		case i >= 0 && !running():
			c := pod.Spec.Containers[i]
			argv := append(append([]string(nil), c.Command...), c.Args...)
			etcd = exec.Command(argv[0], argv[1:]...)
			etcd.Stdout, etcd.Stderr = os.Stdout, os.Stderr
			if err := etcd.Start(); err != nil {
				return err
			}
			exited = make(chan struct{})
			go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(etcd, exited)
			log.Printf("started the static pod's etcd container (pid %d)", etcd.Process.Pid)
		case (gone || i < 0) && running():
			grace := 30 * time.Second
			if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
				grace = time.Duration(*g) * time.Second
			}
			log.Print(Stopping)
			_ = etcd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(grace):
				_ = etcd.Process.Kill()
				<-exited
			}
			log.Print(Stopped)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// LoggedAt is when the log in text last says line (Stopping, Stopped); zero when it never did.
func LoggedAt(text, line string) (time.Time, error) {
	var at time.Time
	for _, l := range strings.Split(text, "\n") {
		stamp, ok := strings.CutPrefix(l, LogPrefix)
		if !ok || !strings.HasSuffix(stamp, " "+line) {
			continue
		}
		t, err := time.Parse("2006/01/02 15:04:05.000000", strings.TrimSpace(strings.TrimSuffix(stamp, line)))
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %w", l, err)
		}
		at = t
	}
	return at, nil
}

// InstallerPod is a node's static pod as the cluster-etcd-operator's installer writes it for
// revision, reduced to what the handover depends on: the etcd container, here etcdBinary with
// spec's flags (the real one runs etcd's image in cri-o, through the operator's script), between
// two of the containers that stay in the pod (not run here). withEtcd false is the revision the
// operator rolls out once ExternalEtcdReadyForTransition is set.
func InstallerPod(spec etcdrun.Spec, etcdBinary, revision string, withEtcd bool) corev1.Pod {
	stay := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "stand-in", Command: []string{"sleep", "infinity"}}
	}
	containers := []corev1.Container{stay("etcdctl")}
	if withEtcd {
		containers = append(containers, corev1.Container{Name: staticpod.EtcdContainer, Image: "stand-in", Command: []string{etcdBinary}, Args: spec.Args()})
	}
	containers = append(containers, stay("etcd-readyz"))
	grace := int64(30)
	return corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd", Namespace: "openshift-etcd", Labels: map[string]string{"app": "etcd", "revision": revision}},
		Spec:       corev1.PodSpec{Containers: containers, HostNetwork: true, TerminationGracePeriodSeconds: &grace}}
}
