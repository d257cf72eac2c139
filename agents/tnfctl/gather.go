package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/gather"
	"github.com/tnf-layer/tnf-layer/internal/node/metrics"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/outofservice"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

// Bounds of a bundle: a support case's attachment, not a disk filler.
const (
	gatherItemLimit   = 16 << 20
	gatherTotalLimit  = 64 << 20
	gatherItemTimeout = 30 * time.Second
	// journalLines bounds what journalctl prints before the item limit cuts it.
	journalLines = "200000"
)

// The units whose journal goes into the bundle.
var gatherUnits = []string{"corosync.service", "pacemaker.service", "tnf-setup.service", "tnf-reconfigure.service",
	"tnf-auto-unblock.service", "tnf-metrics.service", "tnf-publish-status.service", "tnf-out-of-service.service"}

func gatherCommand(nf *nodeFlags) *cobra.Command {
	var output, destDir string
	cmd := &cobra.Command{
		Use:   "gather",
		Short: "Write a support bundle (.tar.gz): status, Pacemaker and Corosync state, logs, etcd, versions; never a secret",
		Example: `  tnfctl gather                     # /var/tmp/tnf-gather-<node>-<time>.tar.gz
  tnfctl gather --dest-dir /root/case-0421
  tnfctl gather --file /root/case-0421/master-0.tar.gz`,
		Long: "Collects what support needs from this node into one .tar.gz: tnfctl status -o json, crm_mon's XML with the " +
			"whole fencing history, the CIB, corosync.conf and Corosync's runtime state, the journals of the cluster's " +
			"units since boot, the Pacemaker, Corosync and etcd logs, the etcd agent's state, etcd's members and " +
			"endpoint status, setup's state, the metrics, the layer's and the packages' versions. Works on an inert node " +
			"and with Pacemaker down: manifest.json lists what could not be collected and why. BMC passwords, the " +
			"cluster keys and private keys are scrubbed from every member; each member and the whole are bounded in size.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			node, err := nf.name()
			if err != nil {
				return err
			}
			if output == "" {
				// As oc adm must-gather does with its --dest-dir: a case folder is made, root's only.
				if err := os.MkdirAll(destDir, 0o700); err != nil {
					return fmt.Errorf("--dest-dir: %w", err)
				}
				output = filepath.Join(destDir, fmt.Sprintf("tnf-gather-%s-%s.tar.gz", node, time.Now().UTC().Format("20060102T150405Z")))
			}
			o := gather.Options{ItemLimit: gatherItemLimit, TotalLimit: gatherTotalLimit, ItemTimeout: gatherItemTimeout}
			o.Items, o.Secrets = gatherItems(nf, node)
			m, err := gather.Write(cmd.Context(), output, o)
			if err != nil {
				return fmt.Errorf("writing %s: %w", output, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d members", output, len(m.Collected))
			if len(m.Missing) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", %d not or partly collected (manifest.json says why)", len(m.Missing))
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	// No -o nor --output: those are an output format in oc and in status; oc adm must-gather
	// takes --dest-dir.
	cmd.Flags().StringVar(&destDir, "dest-dir", "/var/tmp", "the folder the bundle tnf-gather-<node>-<time>.tar.gz is written to (made if missing)")
	cmd.Flags().StringVar(&output, "file", "", "the bundle's whole path instead")
	cmd.Flags().StringVar(&output, "output", "", "the bundle's whole path")
	if err := cmd.Flags().MarkDeprecated("output", "use --file (--output is a format elsewhere)"); err != nil {
		panic(err)
	}
	cmd.MarkFlagsMutuallyExclusive("dest-dir", "file", "output")
	return cmd
}

// gatherItems are the bundle's members, and the secrets to scrub from them: every file of the
// node configuration's secrets (the authkey decoded too), Corosync's and Pacemaker's keys and
// etcd's private keys, as far as they can be read.
func gatherItems(nf *nodeFlags, node string) ([]gather.Item, [][]byte) {
	tools := pcmk.Tools{}
	run := func(name string, args ...string) func(context.Context) ([]byte, error) {
		return func(ctx context.Context) ([]byte, error) {
			out, err := tools.Run(ctx, name, args...)
			return []byte(out), err
		}
	}
	journal := []string{"-b", "--no-pager", "-o", "short-iso-precise", "-n", journalLines}
	for _, u := range gatherUnits {
		journal = append(journal, "-u", u)
	}
	items := []gather.Item{
		{Name: "status.json", Collect: func(ctx context.Context) ([]byte, error) {
			return json.MarshalIndent(readStatus(ctx, nf), "", "  ")
		}},
		{Name: "pacemaker/crm_mon.xml", Collect: func(ctx context.Context) ([]byte, error) {
			out, err := tools.StatusXML(ctx)
			return []byte(out), err
		}},
		{Name: "pacemaker/cib.xml", Collect: run("cibadmin", "--query")},
		{Name: "pacemaker/pacemaker.log", Collect: fileTail("/var/log/pacemaker/pacemaker.log")},
		{Name: "corosync/corosync.conf", Collect: fileTail(nodesetup.CorosyncConf)},
		{Name: "corosync/cmapctl-runtime.txt", Collect: run("corosync-cmapctl", "-b", "runtime.")},
		{Name: "corosync/quorumtool.txt", Collect: run("corosync-quorumtool", "-s")},
		{Name: "corosync/cfgtool.txt", Collect: run("corosync-cfgtool", "-s")},
		{Name: "corosync/corosync.log", Collect: fileTail(filepath.Join(nodesetup.CorosyncLogDir, "corosync.log"))},
		{Name: "journal.txt", Collect: run("journalctl", journal...)},
		{Name: "tnf/cluster.yaml", Collect: fileTail(nf.config)},
		{Name: "tnf/setup.done", Collect: fileTail(nodesetup.Marker)},
		{Name: "tnf/setup.failed", Collect: optional(fileTail(nodesetup.FailedMarker))},
		{Name: "tnf/alone-since", Collect: optional(fileTail(unblock.AloneSinceFile))},
		{Name: "tnf/auto-unblock-decisions.json", Collect: optional(fileTail(unblock.DecisionsFile))},
		{Name: "tnf/peer-last-online", Collect: optional(fileTail(outofservice.LastSeenFile))},
		{Name: "metrics.txt", Collect: metricsText(nf, node)},
		{Name: "versions.txt", Collect: versions},
	}
	secrets := readSecrets(nf)
	etcd, err := loadEtcdNodes(nf)
	if err != nil {
		items = append(items, gather.Item{Name: "etcd/", Collect: failed(fmt.Errorf("%s: %w", nf.config, err))})
		return items, secrets
	}
	if etcd.agent.TLS != nil {
		for _, key := range []string{etcd.agent.TLS.KeyFile, etcd.agent.TLS.PeerKeyFile} {
			secrets = append(secrets, keySecrets(key)...)
		}
	}
	items = append(items,
		gather.Item{Name: "etcd/members.json", Collect: etcd.membersJSON},
		gather.Item{Name: "etcd/etcd.log", Collect: fileTail(etcd.agent.LogFile)})
	entries, err := os.ReadDir(etcd.agent.StateDir)
	if err != nil {
		items = append(items, gather.Item{Name: "etcd/state/", Collect: failed(err)})
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			items = append(items, gather.Item{Name: "etcd/state/" + e.Name(), Collect: fileTail(filepath.Join(etcd.agent.StateDir, e.Name()))})
		}
	}
	return items, secrets
}

// optional is collect for a file that exists only in some states: its absence is no failure.
func optional(collect func(context.Context) ([]byte, error)) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		data, err := collect(ctx)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return data, err
	}
}

func failed(err error) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) { return nil, err }
}

// fileTail reads a file's last gatherItemLimit bytes: a log can be far larger than the bundle.
// It reads regular files only and follows no link: Pacemaker's log folder belongs to hacluster,
// who could put a link to /etc/shadow where pacemaker.log was, for root to read into the bundle.
func fileTail(path string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a link, not read", path)
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s), not read", path, fi.Mode().Type())
		}
		if fi.Size() > gatherItemLimit {
			if _, err := f.Seek(-gatherItemLimit, io.SeekEnd); err != nil {
				return nil, err
			}
		}
		return io.ReadAll(f)
	}
}

// readSecrets reads every secret the node holds that a member could show.
func readSecrets(nf *nodeFlags) [][]byte {
	var secrets [][]byte
	// A secret is a file's content without its line end, as the layer reads a password (which
	// may begin with white space), and that trimmed of white space, as other readers take it.
	add := func(data []byte) {
		line := bytes.TrimRight(data, "\r\n")
		for _, s := range [][]byte{line, bytes.TrimSpace(line)} {
			if len(s) > 0 {
				secrets = append(secrets, s)
			}
		}
	}
	entries, _ := os.ReadDir(clusterconfig.SecretsDir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(clusterconfig.SecretsDir, e.Name()))
		if err != nil {
			continue
		}
		add(data)
		// corosync-authkey is base64: its raw bytes are what corosync's and Pacemaker's key files hold.
		if raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data))); err == nil {
			add(raw)
		}
	}
	for _, key := range []string{nodesetup.AuthkeyPath, "/etc/pacemaker/authkey"} {
		if data, err := os.ReadFile(key); err == nil {
			add(data)
		}
	}
	// Passwords named elsewhere than under the secrets folder (a node configuration edited by
	// hand), and the kubeconfigs the node uses that live elsewhere: the operator's
	// localhost.kubeconfig (the out-of-service taint's) holds a system:masters key.
	if cfg, err := clusterconfig.Load(nf.config); err == nil {
		for _, n := range cfg.Nodes {
			if pw, err := os.ReadFile(n.BMC.PasswordFile); err == nil {
				add(pw)
			}
		}
		kubeconfigs := []string{cfg.OutOfServiceKubeconfig()}
		if cfg.SecretsFromAPI != nil {
			kubeconfigs = append(kubeconfigs, cfg.SecretsFromAPI.KubeconfigFile)
		}
		for _, k := range kubeconfigs {
			secrets = append(secrets, kubeconfigSecrets(k)...)
		}
	}
	return secrets
}

// kubeconfigSecrets are what a kubeconfig authenticates with: its whole text, each user's token
// and password, and each client key as its file holds it (base64) and as PEM (keySecrets).
func kubeconfigSecrets(path string) [][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := [][]byte{bytes.TrimSpace(data)}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return out
	}
	for _, u := range kc.AuthInfos {
		for _, s := range []string{u.Token, u.Password} {
			if s != "" {
				out = append(out, []byte(s))
			}
		}
		if len(u.ClientKeyData) > 0 {
			out = append(out, []byte(base64.StdEncoding.EncodeToString(u.ClientKeyData)))
			out = append(out, pemSecrets(u.ClientKeyData)...)
		}
	}
	return out
}

// keySecrets are a PEM private key file's secrets (pemSecrets).
func keySecrets(path string) [][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return pemSecrets(data)
}

// pemSecrets are a PEM private key's whole text and each line of its body, so that a part
// printed alone is scrubbed too.
func pemSecrets(data []byte) [][]byte {
	out := [][]byte{bytes.TrimSpace(data)}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, []byte(line))
		}
	}
	return out
}

// membersJSON is the member list and each endpoint's status, from whichever node answers.
func (e etcdNodes) membersJSON(ctx context.Context) ([]byte, error) {
	cli, err := e.client()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	type endpointStatus struct {
		Endpoint string `json:"endpoint"`
		Status   any    `json:"status,omitempty"`
		Error    string `json:"error,omitempty"`
	}
	var out struct {
		Members any              `json:"members,omitempty"`
		Error   string           `json:"membersError,omitempty"`
		Status  []endpointStatus `json:"endpoints"`
	}
	rctx, cancel := context.WithTimeout(ctx, etcdRequestTimeout)
	list, err := cli.MemberList(rctx)
	cancel()
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Members = list.Members
	}
	var errs []error
	for _, ep := range e.endpoints {
		rctx, cancel := context.WithTimeout(ctx, etcdRequestTimeout)
		st, err := cli.Status(rctx, ep)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
			out.Status = append(out.Status, endpointStatus{Endpoint: ep, Error: err.Error()})
			continue
		}
		out.Status = append(out.Status, endpointStatus{Endpoint: ep, Status: st})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return data, errors.Join(errs...)
}

// metricsText is what tnfctl metrics serves now, in Prometheus' text format.
func metricsText(nf *nodeFlags, node string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		return metrics.Collector{Read: func(ctx context.Context) metrics.Reading { return readNode(ctx, nf, node) }}.Text()
	}
}

// The packages whose versions the bundle names, on RHCOS (rpm) and on the Debian lab (dpkg).
var packages = []string{"pacemaker", "corosync", "pcs", "fence-agents-redfish", "fence-agents", "resource-agents"}

// versions are the layer's version and the packages' as the package managers know them: rpm on
// RHCOS, dpkg on the Debian lab (where rpm is installed too, and knows none of them). Each lists
// what it knows and fails for the rest (fence-agents-redfish is RHEL's name).
func versions(ctx context.Context) ([]byte, error) {
	out := "layer " + version.Version + "\n"
	tools := pcmk.Tools{}
	var errs []error
	for _, argv := range [][]string{append([]string{"rpm", "-q"}, packages...), append([]string{"dpkg-query", "-W"}, packages...)} {
		text, err := tools.Run(ctx, argv[0], argv[1:]...)
		if text != "" {
			out += "\n$ " + strings.Join(argv, " ") + "\n" + text
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 2 {
		return []byte(out), errors.Join(errs...)
	}
	return []byte(out), nil
}
