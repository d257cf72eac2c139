package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/staticpod"
	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
)

func staticPodGuardCommand(nf *nodeFlags) *cobra.Command {
	var forget bool
	cmd := &cobra.Command{
		Use:   "static-pod-guard",
		Short: "Move a second etcd's pod out of the kubelet's static pods, once Pacemaker runs etcd here",
		Example: `  tnfctl static-pod-guard            # one look (tnf-static-pod-guard.path runs it on every change of the folder)
  tnfctl static-pod-guard --forget   # once a refused manifest is dealt with: status and the alert forget it`,
		Long: "One look at the kubelet's static pod folder (the folder of the etcd agent's static_pod_manifest, " +
			"/etc/kubernetes/manifests), run by tnf-static-pod-guard.path whenever /etc/kubernetes/manifests changes and before " +
			"each kubelet start (a static_pod_manifest configured elsewhere: only then). " +
			"Only on a node whose handover from the installer's etcd is done (before it, the static pod's etcd is the installer's; " +
			"on a guest, the operator's): a manifest there with a container named etcd is a second etcd beside Pacemaker's, as " +
			"OpenShift's cluster-restore.sh and quorum-restore.sh write one. It is moved to " + staticpod.RefusedDir +
			" (kept) before the kubelet starts it, and recorded: tnfctl status, tnf_second_etcd_refused and the alert " +
			"TNFSecondEtcdRefused say so until --forget.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if forget {
				if err := fsutil.RemoveIfExists(staticpod.RefusedFile); err != nil {
					return err
				}
				fmt.Fprintln(out, "forgotten: the manifests refused before (still kept in "+staticpod.RefusedDir+")")
				return nil
			}
			if state, _ := nodesetup.State(); state == nodesetup.StateGuest {
				fmt.Fprintln(out, "nothing guarded: a guest, whose etcd the cluster-etcd-operator runs")
				return nil
			}
			st, ok, err := handover.ReadState(handover.StateFile)
			if err != nil {
				return err
			}
			if !ok || !st.Done() {
				fmt.Fprintln(out, "nothing guarded: the handover from the installer's etcd is not done here, so the static pod's etcd is the installer's")
				return nil
			}
			manifest := etcdnode.DefaultStaticPodManifest
			if e, err := loadEtcdNodes(nf); err == nil {
				manifest = e.agent.StaticPodManifest
			}
			refused, err := staticpod.Guard(filepath.Dir(manifest), staticpod.RefusedDir, time.Now())
			for _, r := range refused {
				fmt.Fprintf(out, "refused: %s runs an etcd container (%s): moved to %s\n", r.Manifest, r.Command, r.MovedTo)
			}
			// A manifest moved but not recorded must still say so: both errors.
			return errors.Join(err, staticpod.RecordRefused(staticpod.RefusedFile, refused))
		},
	}
	cmd.Flags().BoolVar(&forget, "forget", false, "forget the manifests refused before (they stay where they were moved)")
	return cmd
}
