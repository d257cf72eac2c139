package main

import (
	"context"
	"errors"
	"fmt"
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
	"golang.org/x/net/netutil"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

func metricsCommand(nf *nodeFlags) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Serve this node's metrics for Prometheus (/metrics): Pacemaker, Corosync and the layer's own",
		Long: "Reads what tnfctl status reads at each scrape: Pacemaker's and Corosync's metrics under " +
			"ha_cluster_exporter's names and labels, and the layer's own prefixed tnf_. Runs on an inert " +
			"node and with Pacemaker down (tnf_up says which source answered).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMetrics(cmd.Context(), nf, listen)
		},
	}
	// tnf-metrics.service listens on every address of the node.
	cmd.Flags().StringVar(&listen, "listen", fmt.Sprintf(":%d", metrics.Port), "address to listen on")
	return cmd
}

// sharedReadingAge is how long scrapes share a reading: the platform's two Prometheus replicas
// scraping within seconds of each other cost one.
const sharedReadingAge = 5 * time.Second

// maxConnections bounds the connections served at once; more wait in the kernel's backlog.
const maxConnections = 16

func serveMetrics(ctx context.Context, nf *nodeFlags, listen string) error {
	node, err := nf.name()
	if err != nil {
		return err
	}
	reg := prometheus.NewPedanticRegistry()
	shared := &metrics.Shared{Read: func(ctx context.Context) metrics.Reading { return readNode(ctx, nf, node) }, MaxAge: sharedReadingAge}
	reg.MustRegister(metrics.Collector{Read: shared.Get})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	// No keep-alive: an idle kept-alive connection would hold one of the maxConnections for as
	// long as its client keeps it, and a few would lock every scraper out.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	srv.SetKeepAlivesEnabled(false)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown) // the process ends next: nothing to do with its error
	}()
	slog.Info("serving metrics", "address", listen, "path", "/metrics")
	if err := srv.Serve(netutil.LimitListener(ln, maxConnections)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// readNode reads the node's state once: Corosync, its links and Pacemaker as tnfctl status does,
// setup's and auto-unblock's files, and etcd's member list when the node configuration names it
// (read at each scrape: the configuration may arrive after the service started).
func readNode(ctx context.Context, nf *nodeFlags, node string) metrics.Reading {
	start := time.Now()
	tools := pcmk.Tools{}
	r := metrics.Reading{Node: node, Layer: version.Version}
	if m, err := tools.Members(ctx); err == nil {
		r.Corosync = &m
	}
	if l, err := tools.Links(ctx); err == nil {
		r.Links = l
	}
	if p, err := tools.Status(ctx); err == nil {
		r.Pacemaker = &p
	}
	if etcd, err := loadEtcdNodes(nf); err == nil {
		r.Etcd, _ = etcd.members(ctx) // nil when no member answers: tnf_up says so
	}
	r.Setup.State, r.Setup.Reason = nodesetup.State()
	r.AloneSince, _ = unblock.AloneSince(unblock.AloneSinceFile)
	if d, err := unblock.ReadDecisions(unblock.DecisionsFile); err == nil {
		r.AutoUnblock = d
	}
	r.ReadSeconds = time.Since(start).Seconds()
	return r
}
