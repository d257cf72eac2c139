package nodesetup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
)

// InstalledMarker lets cri-o and kubelet start outside Pacemaker (their drop-ins name it beside
// Pacemaker's own): written at boot by `tnfctl installer-kubelet` on a node of a cluster the
// installer made, until the layer's first setup there; on /run, so a reboot ends it, and setup
// removes it once it completed.
const InstalledMarker = "/run/tnf/installer-kubelet"

// InstallerKubelet decides whether this node's boot starts cri-o and kubelet itself, as the
// installer left the node, rather than waiting for Pacemaker. Only on a node the layer's setup
// never completed on (setupDone false) whose kubelet runs the installer's etcd (the static pod
// manifest has its etcd container; manifestErr when it cannot be told). That etcd is a member of
// the installer's two-voter cluster, which raft's quorum keeps safe: it never forces a cluster,
// and the etcd agent does not run beside it. MCO's rollout reboots one node at a time into the
// layer and needs the API meanwhile, which needs both members: a node inert until its peer has
// the layer too would stall the rollout and leave etcd without quorum. Anything that cannot be
// told keeps the node inert.
func InstallerKubelet(setupDone, installerEtcd bool, manifestErr error) (start bool, why string) {
	switch {
	case setupDone:
		return false, "setup has completed here: only Pacemaker starts cri-o and kubelet"
	case manifestErr != nil:
		return false, fmt.Sprintf("whether the installer's etcd runs here cannot be told (%v): the node stays inert", manifestErr)
	case !installerEtcd:
		return false, "the kubelet's static pod has no installer etcd here: only Pacemaker starts cri-o and kubelet"
	}
	return true, "the installer's etcd runs here and setup never completed: cri-o and kubelet start as the installer left them, until the first setup"
}

// StartInstallerKubelet applies InstallerKubelet to this node: with its static pod manifest at
// manifest, it writes InstalledMarker and starts cri-o and kubelet (without waiting: the unit
// that runs it is ordered before them), or does nothing. It returns why.
func StartInstallerKubelet(ctx context.Context, manifest string, systemd Systemd) (string, error) {
	_, err := os.Stat(Marker)
	setupDone := err == nil
	var installer bool
	var manifestErr error
	if !setupDone {
		installer, manifestErr = staticpod.InstallerEtcd(manifest)
	}
	start, why := InstallerKubelet(setupDone, installer, manifestErr)
	if !start {
		return why, nil
	}
	if err := os.MkdirAll(filepath.Dir(InstalledMarker), 0o755); err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(InstalledMarker, nil, 0o644); err != nil {
		return "", err
	}
	_, err = systemd.Tools.Run(ctx, "systemctl", "start", "--no-block", "crio.service", "kubelet.service")
	return why, err
}
