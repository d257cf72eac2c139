package nodesetup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
)

// InstallerKubelet decides whether this node's boot starts cri-o and kubelet itself, as the
// installer left the node, rather than waiting for Pacemaker: only while the kubelet's static
// pod manifest has the installer's etcd container (manifestErr: it cannot be told) and this
// node's etcd was never handed over to the agent (handedOver: its handover got past the
// installer's etcd; an operator's revision that brought the container back must not bring the
// exception back). That etcd is a member of the installer's two-voter cluster, which raft's
// quorum keeps safe: it never forces a cluster, and the etcd agent waits while the manifest has
// it, so the two never run side by side. MCO's rollout reboots one node at a time into the layer
// and needs the API meanwhile, which needs both members: a node inert until its peer runs the
// layer and the cluster configuration too would stall it. Anything that cannot be told keeps the
// node inert.
func InstallerKubelet(handedOver, installerEtcd bool, manifestErr error) (start bool, why string) {
	switch {
	case handedOver:
		return false, "this node's etcd was handed over to the agent: only Pacemaker starts cri-o and kubelet"
	case manifestErr != nil:
		return false, fmt.Sprintf("whether the installer's etcd runs here cannot be told (%v): only Pacemaker starts cri-o and kubelet", manifestErr)
	case !installerEtcd:
		return false, "the kubelet's static pod has no installer etcd here: only Pacemaker starts cri-o and kubelet"
	}
	return true, "the kubelet's static pod runs the installer's etcd here: cri-o and kubelet start as the installer left them, until the handover"
}

// StartInstallerKubelet applies InstallerKubelet to this node, whose static pod manifest is at
// manifest (handedOver: see InstallerKubelet): it writes
// staticpod.KubeletMarker and starts cri-o and kubelet (without waiting: the unit that runs it
// is ordered before them), or does nothing. It returns why.
func StartInstallerKubelet(ctx context.Context, manifest string, handedOver bool, systemd Systemd) (string, error) {
	installer, err := staticpod.InstallerEtcd(manifest)
	start, why := InstallerKubelet(handedOver, installer, err)
	if !start {
		return why, nil
	}
	if err := os.MkdirAll(filepath.Dir(staticpod.KubeletMarker), 0o755); err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(staticpod.KubeletMarker, nil, 0o644); err != nil {
		return "", err
	}
	_, err = systemd.Tools.Run(ctx, "systemctl", "start", "--no-block", "crio.service", "kubelet.service")
	return why, err
}
