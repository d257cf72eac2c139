package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
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
	interval, repeatAfter := publishInterval, pacemakercluster.DefaultWindow
	cmd := &cobra.Command{
		Use:   "publish-status",
		Short: "Publish the cluster's health in the API: the PacemakerCluster object and its Events",
		Long: "Writes, every --interval, the status of the PacemakerCluster object \"cluster\" (etcd.openshift.io/v1, " +
			"the object OpenShift's own two-node clusters publish: `oc get pacemakercluster cluster -o yaml`) from what " +
			"Pacemaker says here, and records Events in " + pacemakercluster.EventNamespace + " for a fencing, a node " +
			"offline, etcd serving from one node alone, a member back, Pacemaker's maintenance mode, a node in " +
			"maintenance or standby, a status no node could write for more than " + pacemakercluster.StaleAfter.String() +
			", and the cluster healthy again, each once within --repeat-after (a fencing once a day): `oc get events -n " +
			pacemakercluster.EventNamespace + "`.\n\n" +
			"Both nodes run it; the node Pacemaker elected its coordinator (DC), with quorum, writes, so that one view of " +
			"the cluster is published at a time. It writes with the node's credential (--kubeconfig, else cluster.yaml's " +
			"secretsFromAPI.kubeconfigFile; a renewed one is used from the next round), whose role tnf-node-status-publisher " +
			"lets it read the object, create it, write its status and create Events there; without one it waits for the file. On a guest node (setup state guest) it writes nothing: the " +
			"cluster-etcd-operator publishes the object there.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return publishStatus(ctx, nf, interval, repeatAfter)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", interval, "how often to read Pacemaker and publish")
	cmd.Flags().DurationVar(&repeatAfter, "repeat-after", repeatAfter, "how long an Event (other than a fencing's) is not recorded again: the field's operator's 5 minutes")
	kubeconfigFlag(cmd, nf)
	return cmd
}

// publishStatus publishes every interval until ctx ends. A round that cannot publish logs why
// once, until the reason changes.
func publishStatus(ctx context.Context, nf *nodeFlags, interval, repeatAfter time.Duration) error {
	node, err := nf.name()
	if err != nil {
		return err
	}
	p := &publisher{nf: nf, node: node, pub: pacemakercluster.NewPublisher(node, repeatAfter)}
	var lastWhy string
	err = poll.Every(ctx, interval, func(ctx context.Context) (bool, error) {
		why, err := p.once(ctx)
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

// publisher is publish-status's state between rounds: the Publisher (what it recorded, what is
// pending) and the credential file it connected with, as it was then.
type publisher struct {
	nf         *nodeFlags
	node       string
	pub        *pacemakercluster.Publisher
	credential string    // the kubeconfig connected with ("" none yet)
	modified   time.Time // its modification time then
}

// once publishes once from this node, or says why this node does not ("" it did).
func (p *publisher) once(ctx context.Context) (string, error) {
	if state, _ := nodesetup.State(); state == nodesetup.StateGuest {
		return "a guest node: the cluster-etcd-operator publishes the object", nil
	}
	cfg, err := p.nf.loadConfig()
	if err != nil {
		return "", err
	}
	// The credential first: on a node without one, nothing else is read.
	path := p.nf.kubeconfig
	if path == "" && cfg.SecretsFromAPI != nil {
		path = cfg.SecretsFromAPI.KubeconfigFile
	}
	if path == "" {
		return "cluster.yaml gives the node no credential for the API (secretsFromAPI) and no --kubeconfig was given", nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "waiting for the node's credential " + path, nil
	} else if err != nil {
		return "", err
	}
	// Before Pacemaker is read: a fencing that completes meanwhile is after the status's time,
	// and the next round's Events have it.
	now := time.Now()
	tools := pcmk.Tools{}
	st, err := tools.Status(ctx)
	if err != nil {
		return "Pacemaker does not answer here: " + firstLine(err.Error()), nil
	}
	// A node that booted alone is its own coordinator, without quorum, and its view (the peer
	// unclean) is not the cluster's: the quorate coordinator's is.
	if st.DC != p.node || !st.WithQuorum {
		return "the coordinator (DC) with quorum publishes: this node's Pacemaker names " + orNone(st.DC) + fmt.Sprintf(", quorum %v", st.WithQuorum), nil
	}
	conf, err := tools.Configuration(ctx)
	if err != nil {
		return "", fmt.Errorf("the CIB's configuration: %w", err)
	}
	// A renewed credential (nodetoken rewrites the file at half the token's lifetime): the old
	// token expires.
	if path != p.credential || !fi.ModTime().Equal(p.modified) {
		rc, err := kubeconfig.Load(path, "tnfctl-publish-status", 0)
		if err != nil {
			return "", err
		}
		if err := p.pub.Connect(rc); err != nil {
			return "", err
		}
		p.credential, p.modified = path, fi.ModTime()
	}
	in := pacemakercluster.Input{Pacemaker: st, Configuration: conf}
	for _, n := range cfg.Nodes {
		in.Nodes = append(in.Nodes, pacemakercluster.Node{Name: n.Name, IP: n.IP})
	}
	events, err := p.pub.Publish(ctx, in, now)
	for _, e := range events {
		slog.Info("event recorded", "reason", e.Reason, "message", e.Message)
	}
	return "", err
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
