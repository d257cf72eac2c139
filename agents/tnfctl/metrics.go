package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/limit"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/apisecrets"
	"github.com/tnf-layer/tnf-layer/internal/node/health"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics/metricsauth"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/nodetoken"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

func metricsCommand(nf *nodeFlags) *cobra.Command {
	o := metricsOptions{certFile: metrics.TLSCertFile, keyFile: metrics.TLSKeyFile, kubeconfig: apisecrets.Kubeconfig}
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve this node's metrics for Prometheus (/metrics): Pacemaker, Corosync and the layer's own",
		Long: "Reads what tnfctl status reads at each scrape: Pacemaker's and Corosync's metrics under " +
			"ha_cluster_exporter's names and labels, and the layer's own prefixed tnf_. Runs on an inert " +
			"node and with Pacemaker down (tnf_up says which source answered).\n\n" +
			"Served as OpenShift serves node-exporter: over TLS with the service-ca operator's certificate (" +
			metrics.TLSCertFile + ", " + metrics.TLSKeyFile + ", from the Secret " + metrics.TLSSecret + "; a renewed one " +
			"is served without a restart), and only to callers whose bearer token the API accepts (TokenReview) and " +
			"whose user may " + metricsauth.Verb + " " + metricsauth.Path + " (SubjectAccessReview), asked with the node's " +
			"kubeconfig " + apisecrets.Kubeconfig + ": 401 without a token or with a rejected one, 403 without the " +
			"permission, 503 when the API cannot be asked. A decision is kept a minute, and ten while the API does " +
			"not answer. Until those three files exist " +
			"(a node boots before its kubeconfig is copied), it serves plain HTTP on 127.0.0.1 only, at --listen's port, " +
			"and switches once they do.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// --kubeconfig, else the node's credential where cluster.yaml says, when it says
			// (secretsFromAPI).
			if nf.kubeconfig != "" {
				o.kubeconfig = nf.kubeconfig
			} else if cfg, err := clusterconfig.Load(nf.config); err == nil && cfg.SecretsFromAPI != nil {
				o.kubeconfig = cfg.SecretsFromAPI.KubeconfigFile
			}
			return serveMetrics(cmd.Context(), nf, o)
		},
	}
	// tnf-metrics.service listens on every address of the node.
	cmd.Flags().StringVar(&o.listen, "listen", fmt.Sprintf(":%d", metrics.Port), "address to serve TLS on (without its files: 127.0.0.1 at this port)")
	cmd.Flags().BoolVar(&o.plaintext, "insecure-plaintext", false, "test and lab setting, for a cluster without an API: plain HTTP without authorization on --listen")
	cmd.Flags().StringVar(&o.certFile, "tls-cert-file", o.certFile, "the serving certificate")
	cmd.Flags().StringVar(&o.keyFile, "tls-key-file", o.keyFile, "its key")
	kubeconfigFlag(cmd, nf)
	hide(cmd, "tls-cert-file", "tls-key-file")
	return cmd
}

// metricsOptions are metrics's flags.
type metricsOptions struct {
	listen                        string
	plaintext                     bool
	certFile, keyFile, kubeconfig string
}

// sharedReadingAge is how long scrapes share a reading: the platform's two Prometheus replicas
// scraping within seconds of each other cost one.
const sharedReadingAge = 5 * time.Second

// What one caller can hold, so that no caller blinds the others (Prometheus's two replicas
// scrape from two addresses, once each 30 s): connections open per source address, counted before
// TLS and the token check; scrapes served at once, counted after them (a reading is shared);
// the time a connection may take for its TLS handshake, then for its request's header. A failed
// handshake is logged at most once per errorLogInterval.
const (
	connectionsPerSource = 8
	scrapesInFlight      = 4
	handshakeTimeout     = 3 * time.Second
	errorLogInterval     = 10 * time.Second
)

// filesPoll is how often an endpoint on loopback looks for the files it needs to serve securely.
const filesPoll = 10 * time.Second

func serveMetrics(ctx context.Context, nf *nodeFlags, o metricsOptions) error {
	node, err := nf.name()
	if err != nil {
		return err
	}
	reg := prometheus.NewPedanticRegistry()
	shared := &metrics.Shared{Read: func(ctx context.Context) metrics.Reading { return readNode(ctx, nf, node) }, MaxAge: sharedReadingAge}
	reg.MustRegister(metrics.Collector{Read: shared.Get})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	// An endpoint on loopback serves again, securely, once its files exist.
	for {
		secured, err := serveMetricsOnce(ctx, o, mux)
		if err != nil || !secured {
			return err
		}
	}
}

// serveMetricsOnce serves in the mode the files allow until ctx ends, or, on loopback, until the
// files appear (true: serve again, securely).
func serveMetricsOnce(ctx context.Context, o metricsOptions, mux http.Handler) (bool, error) {
	mode, addr, why, err := metricsauth.Choose(o.listen, o.plaintext, missingFiles(o))
	if err != nil {
		return false, err
	}
	// No keep-alive: an idle kept-alive connection would hold one of its source's connections
	// for as long as its client keeps it. HTTP/1.1 only over TLS for the same reason: an HTTP/2
	// connection stays open. net/http bounds the handshake by the shortest of its timeouts.
	srv := &http.Server{Handler: limit.InFlight(scrapesInFlight, mux), ReadHeaderTimeout: handshakeTimeout, WriteTimeout: 30 * time.Second,
		Protocols: new(http.Protocols), ErrorLog: log.New(&limit.LogWriter{W: os.Stderr, Interval: errorLogInterval}, "", log.LstdFlags)}
	srv.Protocols.SetHTTP1(true)
	srv.SetKeepAlivesEnabled(false)
	if mode == metricsauth.Secure {
		cert := &metricsauth.Certificate{CertFile: o.certFile, KeyFile: o.keyFile}
		if err := cert.Load(); err != nil {
			return false, fmt.Errorf("metrics: %w", err)
		}
		reviewer := &metricsauth.APIReviewer{Kubeconfig: o.kubeconfig}
		if err := reviewer.Check(); err != nil {
			return false, fmt.Errorf("metrics: %w", err)
		}
		srv.Handler = (&metricsauth.Authorizer{Review: reviewer.Review}).Handler(srv.Handler)
		// OpenShift's default TLS profile (Intermediate) starts at 1.2.
		srv.TLSConfig = &tls.Config{GetCertificate: cert.GetCertificate, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false, fmt.Errorf("metrics: %w", err)
	}
	serving, cancel := context.WithCancel(ctx)
	defer cancel()
	filesExist := make(chan struct{})
	if mode == metricsauth.Loopback {
		go func() {
			if waitFiles(serving, o) {
				close(filesExist)
			}
		}()
	}
	go func() {
		select {
		case <-serving.Done():
		case <-filesExist:
			slog.Info("the serving certificate and the kubeconfig exist: serving securely")
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown) // the process ends or serves anew next: nothing to do with its error
	}()
	if mode == metricsauth.Secure {
		slog.Info("serving metrics", "address", addr, "path", "/metrics", "mode", why)
		err = srv.ServeTLS(limit.PerSource(ln, connectionsPerSource), "", "")
	} else {
		slog.Warn("serving metrics", "address", addr, "path", "/metrics", "mode", why)
		err = srv.Serve(limit.PerSource(ln, connectionsPerSource))
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return false, fmt.Errorf("metrics: %w", err)
	}
	select {
	case <-filesExist:
		return true, nil
	default:
		return false, nil
	}
}

// missingFiles are those of the serving certificate and the node's kubeconfig that do not exist.
func missingFiles(o metricsOptions) []string {
	var missing []string
	for _, f := range []string{o.certFile, o.keyFile, o.kubeconfig} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	return missing
}

// waitFiles returns true once every file exists, false when ctx ends first.
func waitFiles(ctx context.Context, o metricsOptions) bool {
	err := poll.Every(ctx, filesPoll, func(context.Context) (bool, error) { return len(missingFiles(o)) == 0, nil })
	return err == nil && ctx.Err() == nil
}

// readNode reads the node's state once: Corosync, its links and Pacemaker as tnfctl status does,
// setup's and auto-unblock's files, and etcd's member list when the node configuration names it
// (read at each scrape: the configuration may arrive after the service started).
func readNode(ctx context.Context, nf *nodeFlags, node string) metrics.Reading {
	start := time.Now()
	tools := pcmk.Tools{}
	r := metrics.Reading{Node: node, Layer: version.Version, Release: version.Release}
	if m, err := tools.Members(ctx); err == nil {
		r.Corosync = &m
	}
	if l, err := tools.Links(ctx); err == nil {
		r.Links = l
	}
	if p, err := tools.Status(ctx); err == nil {
		r.Pacemaker = &p
		if c, err := tools.Configuration(ctx); err == nil {
			r.Configuration = &c
		}
	}
	if nc, err := nf.load(); err == nil {
		if etcd, err := etcdNodesOf(nf.config, nc); err == nil {
			r.Etcd, _ = etcd.members(ctx) // nil when no member answers: tnf_up says so
		}
		if s := nc.Config.SecretsFromAPI; s != nil {
			if t, err := nodetoken.Read(s.KubeconfigFile); err == nil && t.Bound {
				r.CredentialIssued, r.CredentialExpires = t.Issued, t.Expires
			}
		}
	}
	r.Setup.State, r.Setup.Reason = nodesetup.State()
	o := observeLocal()
	o.SetupState, o.SetupReason = r.Setup.State, r.Setup.Reason
	o.Corosync, o.Pacemaker, o.Configuration, o.FencingFails = r.Corosync, r.Pacemaker, r.Configuration, health.FencingFails(r.Corosync, r.Pacemaker)
	r.Health, r.HandoverPending, r.SecondEtcd = health.Assess(o), o.HandoverPending(), len(o.SecondEtcd)
	r.AloneSince, _ = unblock.AloneSince(unblock.AloneSinceFile)
	if d, err := unblock.ReadDecisions(unblock.DecisionsFile); err == nil {
		r.AutoUnblock = d
	}
	r.ReadSeconds = time.Since(start).Seconds()
	return r
}
