package manifests

import (
	"fmt"
	"net/netip"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tnf-layer/tnf-layer/internal/build/alerts"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
)

// metricsName names the Service, its EndpointSlice and the ServiceMonitor.
const metricsName = "tnf-metrics"

// metricsServerName is the Service's DNS name, the one its serving certificate is for.
const metricsServerName = metricsName + "." + alerts.Namespace + ".svc"

// metricsPortName is the port's name the ServiceMonitor scrapes.
const metricsPortName = "metrics"

// What the platform Prometheus scrapes with, as OpenShift's own ServiceMonitors (the
// cluster-etcd-operator's among them) name it: its ServiceAccount's token, which the endpoint
// reviews through the API, and the service CA bundle the cluster-monitoring-operator mounts into
// it, which signed the endpoint's certificate.
const (
	prometheusTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	serviceCAFile       = "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt"
)

// servingCertAnnotation asks the service-ca operator for a certificate of the Service's DNS name
// in the named Secret.
const servingCertAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

// Endpoints, not an EndpointSlice, on purpose: see MetricsScrape. bearerTokenFile, deprecated for
// authorization, which takes a Secret only: a pod's own projected token has none.
//lint:file-ignore SA1019 Endpoints and bearerTokenFile on purpose.

// MetricsScrape is what lets OpenShift's platform Prometheus scrape tnf-metrics.service on both
// nodes, as it scrapes the kubelet: the nodes are no pods, so a Service without a selector whose
// Endpoints list the two nodes' addresses, and a ServiceMonitor on that Service. Endpoints, not an
// EndpointSlice: Kubernetes mirrors a selector-less Service's Endpoints into an EndpointSlice, so
// a Prometheus discovering either finds them (the reverse is not mirrored). All three live in
// alerts.Namespace (openshift-etcd), where the platform Prometheus already may list Services,
// Endpoints and EndpointSlices (the cluster-etcd-operator's prometheus-k8s Role). The endpoint
// serves TLS and reviews each caller as kube-rbac-proxy does in front of node-exporter: the
// Service asks the service-ca operator for the certificate (the nodes fetch the Secret through the
// API), and the ServiceMonitor scrapes over TLS checked against the service CA for the Service's
// name, with Prometheus's own token.
func MetricsScrape(in clusterconfig.Input) (*corev1.Service, *corev1.Endpoints, *monitoringv1.ServiceMonitor, error) {
	labels := map[string]string{"app": metricsName}
	subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: metricsPortName, Port: metrics.Port, Protocol: corev1.ProtocolTCP}}}
	for i, n := range in.Config.Nodes {
		if _, err := netip.ParseAddr(n.IP); err != nil {
			return nil, nil, nil, fmt.Errorf("nodes[%d].ip: %q: the metrics endpoint is scraped at the node's address: %w", i, n.IP, err)
		}
		subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: n.IP, NodeName: ptr.To(n.Name)})
	}
	meta := metav1.ObjectMeta{Name: metricsName, Namespace: alerts.Namespace, Labels: labels}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: metricsPortName, Port: metrics.Port, TargetPort: intstr.FromInt32(metrics.Port), Protocol: corev1.ProtocolTCP}},
		},
	}
	svc.Annotations = map[string]string{servingCertAnnotation: metrics.TLSSecret}
	endpoints := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: meta,
		Subsets:    []corev1.EndpointSubset{subset},
	}
	mon := &monitoringv1.ServiceMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.ServiceMonitorsKind},
		ObjectMeta: meta,
		Spec: monitoringv1.ServiceMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Endpoints: []monitoringv1.Endpoint{{
				Port: metricsPortName, Interval: "30s", Scheme: "https",
				BearerTokenFile: prometheusTokenFile,
				TLSConfig: &monitoringv1.TLSConfig{
					CAFile:        serviceCAFile,
					SafeTLSConfig: monitoringv1.SafeTLSConfig{ServerName: ptr.To(metricsServerName)},
				},
			}},
			JobLabel: "app",
		},
	}
	return svc, endpoints, mon, nil
}
