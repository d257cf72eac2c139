package outofservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// Annotation marks a taint this layer put on a Node, with the time of the fencing it follows:
// only a taint so marked is taken off here (an administrator's own stays).
const Annotation = "tnf-layer.io/out-of-service-fencing"

// LastSeenFile is where a node keeps when it last saw its peer online: on its disk, so neither a
// restart of the service nor of the node forgets that the peer came back after a fencing.
const LastSeenFile = "/var/lib/tnf/peer-last-online"

// lastSeenRefresh is how stale LastSeenFile may get while the peer is online. It is rewritten at
// once when it is not after the last fencing, so a peer back from a fencing is on record at the
// first pass that sees it.
const lastSeenRefresh = 30 * time.Second

// Taint is the taint: Kubernetes' non-graceful node shutdown.
var Taint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// Reconciler makes the peer's Node match what Decide says, one pass at a time.
type Reconciler struct {
	Tools      pcmk.Tools
	Self, Peer string
	// Kubeconfig is read on every pass: the operator that writes it rotates it.
	Kubeconfig   string
	LastSeenFile string // default LastSeenFile
	Log          *slog.Logger
	Now          func() time.Time // default time.Now

	logged string // the last decision or error logged: a pass logs only what changed
}

// Run makes a pass every interval until ctx ends; a failed pass (Pacemaker or the API not
// answering) is logged and the next one tries again.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) error {
	err := poll.Every(ctx, interval, func(ctx context.Context) (bool, error) {
		pass, cancel := context.WithTimeout(ctx, interval+10*time.Second)
		defer cancel()
		if _, err := r.Pass(pass); err != nil && ctx.Err() == nil {
			r.logChange(slog.LevelWarn, "pass failed", "error", err.Error())
		}
		return false, nil
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Pass reads Pacemaker's view and the peer's Node, decides, and adds or removes the taint.
func (r *Reconciler) Pass(ctx context.Context) (Action, error) {
	now := r.now()
	st, err := r.Tools.Status(ctx)
	if err != nil {
		return Keep, fmt.Errorf("reading Pacemaker's status: %w", err)
	}
	peer := st.Peer(r.Self)
	if peer.Name != r.Peer {
		return Keep, fmt.Errorf("no node %s beside %s in Pacemaker's status", r.Peer, r.Self)
	}
	o := Observation{Now: now, PeerOnline: peer.Online}
	o.LastFenced, _ = st.Fencing.LastSuccess(r.Peer, time.Time{})
	// An unreadable or garbled record is an error, not "never seen": a wrong time could taint a
	// peer that came back.
	if o.LastSeenOnline, _, err = fsutil.ReadTime(r.lastSeenFile()); err != nil {
		return Keep, err
	}
	if o.PeerOnline && (now.Sub(o.LastSeenOnline) >= lastSeenRefresh || !o.LastSeenOnline.After(o.LastFenced)) {
		if err := fsutil.WriteTime(r.lastSeenFile(), now); err != nil {
			return Keep, err
		}
		o.LastSeenOnline = now
	}

	client, err := r.client()
	if err != nil {
		return Keep, err
	}
	node, err := client.node(ctx, r.Peer)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return Keep, fmt.Errorf("reading Node %s: %w", r.Peer, err)
	default:
		o.Node = nodeState(node)
	}
	if o.PeerOnline && o.Node.Ours && o.Node.Ready {
		if o.Node.Attachments, err = attachments(ctx, client, r.Peer); err != nil {
			return Keep, err
		}
	}

	action, why := Decide(o)
	r.logChange(slog.LevelInfo, "decision", "peer", r.Peer, "action", string(action), "reason", why)
	switch action {
	case Add:
		err = r.update(ctx, client, func(n *corev1.Node) bool { return addTaint(n, now, o.LastFenced) })
	case Remove:
		err = r.update(ctx, client, removeTaint)
	}
	if err != nil {
		return action, fmt.Errorf("%s the out-of-service taint on Node %s: %w", map[Action]string{Add: "adding", Remove: "removing"}[action], r.Peer, err)
	}
	return action, nil
}

// apiClient is client-go's REST client over a scheme of the two groups a pass reads (core for
// Nodes, storage for VolumeAttachments): the typed clientset registers every API group and
// would double tnfctl's size.
type apiClient struct {
	core, storage *rest.RESTClient
}

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(storagev1.AddToScheme(scheme))
}

func (r *Reconciler) client() (apiClient, error) {
	cfg, err := kubeconfig.Load(r.Kubeconfig, "tnf-out-of-service", 0)
	if err != nil {
		return apiClient{}, fmt.Errorf("outOfService.kubeconfigFile: %w", err)
	}
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	group := func(gv schema.GroupVersion, path string) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath = &gv, path
		return rest.RESTClientFor(c)
	}
	var a apiClient
	if a.core, err = group(corev1.SchemeGroupVersion, "/api"); err != nil {
		return apiClient{}, err
	}
	if a.storage, err = group(storagev1.SchemeGroupVersion, "/apis"); err != nil {
		return apiClient{}, err
	}
	return a, nil
}

func (a apiClient) node(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, a.core.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

// patchTaints writes n's taints and this layer's annotation, and nothing else: a merge patch,
// where a PUT of the whole Node, built from this binary's types, would drop the fields they do
// not know. The taints are a list a merge patch replaces whole, so the patch carries the
// resourceVersion they were read at: a Node changed since is a conflict, not a lost taint.
func (a apiClient) patchTaints(ctx context.Context, n *corev1.Node) error {
	var mark *string
	if v, ok := n.Annotations[Annotation]; ok {
		mark = &v
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": n.ResourceVersion, "annotations": map[string]*string{Annotation: mark}},
		"spec":     map[string]any{"taints": n.Spec.Taints},
	})
	if err != nil {
		return err
	}
	return a.core.Patch(types.MergePatchType).Resource("nodes").Name(n.Name).Body(patch).Do(ctx).Error()
}

// update changes the peer's Node with change (false: nothing to change, it is as wanted
// already), read afresh and tried again on a conflict with another writer.
func (r *Reconciler) update(ctx context.Context, client apiClient, change func(*corev1.Node) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.node(ctx, r.Peer)
		if err != nil || !change(n) {
			return err
		}
		return client.patchTaints(ctx, n)
	})
}

func addTaint(n *corev1.Node, now, fenced time.Time) bool {
	if tainted(n) {
		return false
	}
	t := Taint
	added := metav1.NewTime(now)
	t.TimeAdded = &added
	n.Spec.Taints = append(n.Spec.Taints, t)
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[Annotation] = fenced.UTC().Format(time.RFC3339)
	return true
}

func removeTaint(n *corev1.Node) bool {
	if _, ours := n.Annotations[Annotation]; !ours {
		return false
	}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, isTaint)
	delete(n.Annotations, Annotation)
	return true
}

func tainted(n *corev1.Node) bool { return slices.ContainsFunc(n.Spec.Taints, isTaint) }

// isTaint tells the out-of-service taint (key and effect; the value and time do not count).
func isTaint(t corev1.Taint) bool { return t.MatchTaint(&Taint) }

func nodeState(n *corev1.Node) NodeState {
	s := NodeState{Found: true, Tainted: tainted(n)}
	_, s.Ours = n.Annotations[Annotation]
	s.Ours = s.Ours && s.Tainted
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			s.Ready, s.ReadySince = c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return s
}

// attachments counts the VolumeAttachments naming node.
func attachments(ctx context.Context, client apiClient, node string) (int, error) {
	list := &storagev1.VolumeAttachmentList{}
	if err := client.storage.Get().Resource("volumeattachments").Do(ctx).Into(list); err != nil {
		return 0, fmt.Errorf("listing VolumeAttachments: %w", err)
	}
	n := 0
	for _, a := range list.Items {
		if a.Spec.NodeName == node {
			n++
		}
	}
	return n, nil
}

func (r *Reconciler) lastSeenFile() string {
	if r.LastSeenFile == "" {
		return LastSeenFile
	}
	return r.LastSeenFile
}

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// logChange logs msg with its attributes unless the previous pass logged the same.
func (r *Reconciler) logChange(level slog.Level, msg string, args ...any) {
	key := fmt.Sprint(msg, args)
	if key == r.logged {
		return
	}
	r.logged = key
	r.Log.Log(context.Background(), level, msg, args...)
}
