package nodesetup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
)

// GuestBootMarker lets cri-o start at boot on a guest node (units/crio.service.d): the operator's
// configuration starts the kubelet through Pacemaker and leaves cri-o to boot, as OpenShift
// does. On /run: every boot decides again.
const GuestBootMarker = "/run/tnf/guest"

// BootServices decides which of cri-o and kubelet this node's boot starts itself rather than
// leaving them to Pacemaker. On a guest node (guest: the cluster-etcd-operator configured
// Pacemaker here), cri-o only, as the operator's configuration expects: its kubelet resource
// starts the kubelet. Elsewhere both, only while the kubelet's static pod manifest has the
// installer's etcd container (manifestErr: it cannot be told) and this node's etcd was never
// handed over to the agent (handedOver: its handover got past the installer's etcd; an
// operator's revision that brought the container back must not bring the exception back). That
// etcd is a member of the installer's two-voter cluster, which raft's quorum keeps safe: it
// never forces a cluster, and the etcd agent waits while the manifest has it, so the two never
// run side by side. MCO's rollout reboots one node at a time into the layer and needs the API
// meanwhile, which needs both members: a node inert until its peer runs the layer and the
// cluster configuration too would stall it. Anything that cannot be told keeps the node inert.
func BootServices(guest, handedOver, installerEtcd bool, manifestErr error) (units []string, why string) {
	switch {
	case guest:
		return []string{"crio.service"}, "the cluster-etcd-operator configured Pacemaker here (guest): cri-o starts at boot, its kubelet resource starts the kubelet"
	case handedOver:
		return nil, "this node's etcd was handed over to the agent: only Pacemaker starts cri-o and kubelet"
	case manifestErr != nil:
		return nil, fmt.Sprintf("whether the installer's etcd runs here cannot be told (%v): only Pacemaker starts cri-o and kubelet", manifestErr)
	case !installerEtcd:
		return nil, "the kubelet's static pod has no installer etcd here: only Pacemaker starts cri-o and kubelet"
	}
	return []string{"crio.service", "kubelet.service"}, "the kubelet's static pod runs the installer's etcd here: cri-o and kubelet start as the installer left them, until the handover"
}

// StartBootServices applies BootServices to this node, whose static pod manifest is at
// manifest, whose cluster is named clusterName in cluster.yaml (for the guest check) and whose
// etcd was handed over or not: it writes the marker that lets the units start
// (GuestBootMarker, staticpod.KubeletMarker) and starts them (without waiting: the unit that
// runs it is ordered before them), or does nothing. It returns why.
func StartBootServices(ctx context.Context, manifest, clusterName string, handedOver bool, systemd Systemd) (string, error) {
	guestWhy, err := Guest(clusterName)
	if err != nil {
		return "", err
	}
	installer, manifestErr := staticpod.InstallerEtcd(manifest)
	units, why := BootServices(guestWhy != "", handedOver, installer, manifestErr)
	if len(units) == 0 {
		return why, nil
	}
	marker := staticpod.KubeletMarker
	if guestWhy != "" {
		marker = GuestBootMarker
	}
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(marker, nil, 0o644); err != nil {
		return "", err
	}
	_, err = systemd.Tools.Run(ctx, "systemctl", append([]string{"start", "--no-block"}, units...)...)
	return why, err
}
