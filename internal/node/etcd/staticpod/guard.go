package staticpod

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// Once Pacemaker runs this node's etcd (its handover done), an etcd container in a pod the kubelet
// runs from its static pod folder is a second etcd: OpenShift's cluster-restore.sh and
// quorum-restore.sh put one there (their restore pods, as etcd-pod.yaml), which the kubelet starts
// at once and again at every boot. Beside Pacemaker's it cannot bind the ports; once Pacemaker's
// stops (a restart, a reboot), it serves the data dir (or the snapshot) alone while the peer's agent,
// told the instance here stopped, forces a cluster of its own: two etcds serving. The guard moves
// such a manifest out of the folder before the kubelet acts on it, and records it.

// RefusedDir is where the guard keeps the manifests it took out of the kubelet's folder.
const RefusedDir = "/var/lib/tnf/refused-static-pods"

// RefusedFile records what the guard refused, for tnfctl status, the metrics and the alert, until
// an administrator has read it (tnfctl static-pod-guard --forget).
const RefusedFile = "/var/lib/tnf/refused-static-pods.json"

// Refused is one manifest the guard took out of the kubelet's folder.
type Refused struct {
	Manifest string    `json:"manifest"` // where the kubelet would have read it
	MovedTo  string    `json:"movedTo"`  // where it is kept
	At       time.Time `json:"at"`
	// Command is its etcd container's command line, cut at 300 characters: what it would have run.
	Command string `json:"command"`
}

// Guard moves every manifest of the kubelet's static pod folder dir that runs a container named
// etcd into keep (the copy written and synced before the manifest goes), and returns them. A file that is no pod (half-written, another kind) is not the guard's to judge: the
// kubelet refuses it too, and a finished one raises another look. Hidden files, which the kubelet
// ignores, are skipped.
func Guard(dir, keep string, now time.Time) ([]Refused, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var refused []Refused
	var errs []error
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		pod, err := Read(path)
		i := EtcdIndex(pod)
		if err != nil || i < 0 {
			continue
		}
		c := pod.Spec.Containers[i]
		r := Refused{Manifest: path, At: now.UTC(), Command: cut(strings.Join(append(append([]string(nil), c.Command...), c.Args...), " "), 300),
			MovedTo: filepath.Join(keep, e.Name()+"."+now.UTC().Format("20060102T150405.000000000Z"))}
		if err := moveOut(path, r.MovedTo); err != nil {
			errs = append(errs, fmt.Errorf("moving %s out of the kubelet's folder: %w", path, err))
			continue
		}
		refused = append(refused, r)
	}
	return refused, errors.Join(errs...)
}

// moveOut moves path to dest, which may be on another file system (the kubelet's folder is under
// /etc, the copy under /var): the copy is durable before the original goes.
func moveOut(path, dest string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(dest, data, 0o600); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(path))
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ReadRefused reads what the guard recorded (none: no file).
func ReadRefused(path string) ([]Refused, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var refused []Refused
	if err == nil {
		err = json.Unmarshal(data, &refused)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return refused, nil
}

// RecordRefused adds refused to the record at path.
func RecordRefused(path string, refused []Refused) error {
	if len(refused) == 0 {
		return nil
	}
	old, err := ReadRefused(path)
	if err != nil {
		return err
	}
	data, err := json.Marshal(append(old, refused...))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, data, 0o644)
}
