package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemakercluster"
)

// publishInterval is how often the publishing node reads Pacemaker and writes the object: a
// change shows within about half of it, well inside the field's minute.
const publishInterval = 10 * time.Second

func publishStatusCommand(nf *nodeFlags) *cobra.Command {
	interval := publishInterval
	cmd := &cobra.Command{
		Use:   "publish-status",
		Short: "Publish the cluster's health in the API: the PacemakerCluster object and its Events",
		Long: "Writes, every --interval, the status of the PacemakerCluster object \"cluster\" (etcd.openshift.io/v1, " +
			"the object OpenShift's own two-node clusters publish: `oc get pacemakercluster cluster -o yaml`) from what " +
			"Pacemaker says here, and records Events in " + pacemakercluster.EventNamespace + " for a fencing, a node " +
			"offline, etcd serving from one node alone, a member back, Pacemaker's maintenance mode, a node in " +
			"maintenance or standby, a status no node could write for more than " + pacemakercluster.StaleAfter.String() +
			", and the cluster healthy again, each once in five minutes (a fencing once a day): `oc get events -n " +
			pacemakercluster.EventNamespace + "`.\n\n" +
			"Both nodes run it; the node Pacemaker elected its coordinator (DC) writes, so that one view of the cluster " +
			"is published at a time. It writes with the node's credential (--kubeconfig, else cluster.yaml's " +
			"secretsFromAPI.kubeconfigFile), which may write that object and create Events there, nothing else; without one it waits for the file. On a guest node (setup state guest) it writes nothing: the " +
			"cluster-etcd-operator publishes the object there.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return publishStatus(ctx, nf, interval)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", interval, "how often to read Pacemaker and publish")
	kubeconfigFlag(cmd, nf)
	return cmd
}

// publishStatus publishes every interval until ctx ends. A round that cannot publish logs why
// once, until the reason changes.
func publishStatus(ctx context.Context, nf *nodeFlags, interval time.Duration) error {
	node, err := nf.name()
	if err != nil {
		return err
	}
	var pub *pacemakercluster.Publisher
	var lastWhy string
	err = poll.Every(ctx, interval, func(ctx context.Context) (bool, error) {
		why, err := publishOnce(ctx, nf, node, &pub)
		if err != nil {
			why = err.Error()
		}
		if why != lastWhy {
			if err != nil {
				slog.Warn("not published", "reason", why)
			} else if why != "" {
				slog.Info("not publishing", "reason", why)
			} else {
				slog.Info("publishing the cluster's status", "object", pacemakercluster.Resource.GroupResource().String()+"/"+pacemakercluster.Name)
			}
			lastWhy = why
		}
		return false, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// publishOnce publishes once from this node, or says why this node does not ("" it did).
func publishOnce(ctx context.Context, nf *nodeFlags, node string, pub **pacemakercluster.Publisher) (string, error) {
	if state, _ := nodesetup.State(); state == nodesetup.StateGuest {
		return "a guest node: the cluster-etcd-operator publishes the object", nil
	}
	cfg, err := nf.loadConfig()
	if err != nil {
		return "", err
	}
	// The credential first: on a node without one, nothing else is read.
	path := nf.kubeconfig
	if path == "" && cfg.SecretsFromAPI != nil {
		path = cfg.SecretsFromAPI.KubeconfigFile
	}
	if path == "" {
		return "cluster.yaml gives the node no credential for the API (secretsFromAPI) and no --kubeconfig was given", nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "waiting for the node's credential " + path, nil
	}
	tools := pcmk.Tools{}
	st, err := tools.Status(ctx)
	if err != nil {
		return "Pacemaker does not answer here", nil
	}
	if st.DC != node {
		return "the coordinator (DC) " + orNone(st.DC) + " publishes", nil
	}
	conf, err := tools.Configuration(ctx)
	if err != nil {
		return "", fmt.Errorf("the CIB's configuration: %w", err)
	}
	if *pub == nil {
		rc, err := kubeconfig.Load(path, "tnfctl-publish-status", 0)
		if err != nil {
			return "", err
		}
		if *pub, err = pacemakercluster.NewPublisher(rc, node); err != nil {
			return "", err
		}
	}
	in := pacemakercluster.Input{Pacemaker: st, Configuration: conf}
	for _, n := range cfg.Nodes {
		in.Nodes = append(in.Nodes, pacemakercluster.Node{Name: n.Name, IP: n.IP})
	}
	events, err := (*pub).Publish(ctx, in, time.Now())
	for _, e := range events {
		slog.Info("event recorded", "reason", e.Reason, "message", e.Message)
	}
	return "", err
}
