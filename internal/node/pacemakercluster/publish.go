package pacemakercluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// EventNamespace is where the Events go: beside etcd's pods, where the field's are looked for.
const EventNamespace = "openshift-etcd"

// Component names the layer as the Events' source.
const Component = "tnf-layer"

// Publisher writes the object's status and the Events of its changes through the API.
type Publisher struct {
	objects dynamic.NamespaceableResourceInterface
	events  kubernetes.Interface
	node    string
	dedup   Dedup
	// pending are the Events that could not be recorded yet: each is tried again at the next
	// Publish, since the status that holds its change is already written.
	pending []Event
}

// NewPublisher publishes as node, the Events' source host. An Event other than a fencing is
// recorded once within repeatAfter (DefaultWindow when zero). Connect gives it its credential.
func NewPublisher(node string, repeatAfter time.Duration) *Publisher {
	return &Publisher{node: node, dedup: Dedup{Window: repeatAfter}}
}

// Connect makes the Publisher write with the credential of cfg from now on: the first one, or
// a renewed one. What it has recorded and what is pending stay.
func (p *Publisher) Connect(cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	p.objects, p.events = dyn.Resource(Resource), core
	return nil
}

// Publish writes the status Build makes of in at now over the published one (the object is
// created when there is none), then records the Events of what changed, and those pending
// from earlier rounds, each once within its window. It returns the Events it recorded; one
// that fails stays pending.
func (p *Publisher) Publish(ctx context.Context, in Input, now time.Time) ([]Event, error) {
	obj, err := p.objects.Get(ctx, Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj, err = p.objects.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": Resource.GroupVersion().String(), "kind": Kind, "metadata": map[string]any{"name": Name}}}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", Resource.GroupResource(), Name, err)
	}
	var pc PacemakerCluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &pc); err != nil {
		return nil, fmt.Errorf("%s %s: %w", Resource.GroupResource(), Name, err)
	}
	var prev *Status
	if !pc.Status.LastUpdated.IsZero() {
		published := pc.Status // a copy: pc.Status is replaced below
		prev = &published
	}
	pc.Status = Build(in, prev, now)
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pc)
	if err != nil {
		return nil, err
	}
	// The resource version read above: a status another node wrote meanwhile is a conflict, and
	// the next round builds on it.
	if _, err := p.objects.UpdateStatus(ctx, &unstructured.Unstructured{Object: u}, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("%s %s: status: %w", Resource.GroupResource(), Name, err)
	}
	events := append(p.pending, Events(prev, pc.Status, in.Pacemaker.Fencing, now)...)
	p.pending = nil
	var recorded []Event
	var errs []error
	for _, e := range events {
		if !p.dedup.Due(e, now) {
			continue
		}
		if err := p.record(ctx, e, now); err != nil {
			p.pending = append(p.pending, e)
			errs = append(errs, fmt.Errorf("event %s: %w", e.Reason, err))
			continue
		}
		p.dedup.Recorded(e, now)
		recorded = append(recorded, e)
	}
	return recorded, errors.Join(errs...)
}

// record creates e as an Event of the object. The object is cluster-scoped, and the API keeps
// such an object's Events in the default namespace; the reference names EventNamespace
// instead, so that they are where a reader of etcd's Events looks (oc get events -n
// openshift-etcd).
func (p *Publisher) record(ctx context.Context, e Event, now time.Time) error {
	at := metav1.NewTime(now)
	ref := corev1.ObjectReference{APIVersion: Resource.GroupVersion().String(), Kind: Kind, Name: Name, Namespace: EventNamespace}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: Name + ".", Namespace: EventNamespace},
		InvolvedObject: ref, Reason: e.Reason, Message: e.Message, Type: e.Type,
		FirstTimestamp: at, LastTimestamp: at, Count: 1,
		Source: corev1.EventSource{Component: Component, Host: p.node}, ReportingController: Component, ReportingInstance: p.node,
	}
	_, err := p.events.CoreV1().Events(EventNamespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}
