// Package pcsconfig renders pcs-templates/ from a node configuration (/etc/tnf/cluster.yaml):
// corosync.conf, and the cluster configuration as pcs commands. Rendering is pure; tnfctl setup
// writes and runs the results.
package pcsconfig

import (
	"bytes"
	"cmp"
	"crypto/md5"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	tnflayer "github.com/tnf-layer/tnf-layer"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// FenceDevice is the stonith device that fences node by powering it off through its BMC
// (fence_tnf_redfish, level 2).
func FenceDevice(node string) string { return "fence-" + node }

// PowerOffDevice is the stonith device that fences node by proving it powered off (level 1).
func PowerOffDevice(node string) string { return "fence-" + node + "-poweroff" }

// DCDeadtime is Pacemaker's dc-deadtime: how long a starting controller waits for a DC to
// answer before it calls an election. When both nodes start together there is no DC to answer,
// and every such start (the first boot, a site's power back) waited out the default 20 s before
// anything ran. A DC answers a joining node within about a second (measured here), so 5 s still
// leaves it room; one that answers later only costs an election, which the older DC wins.
const DCDeadtime = "5s"

// FirstCIBOptions are the cluster options a node's first CIB holds before Pacemaker starts
// (pcmk.SeedCIB): those that act before a DC could apply the configuration.
func FirstCIBOptions() [][2]string { return [][2]string{{"dc-deadtime", DCDeadtime}} }

// FencingAlert is the alert agent the layer installs (agents/tnf-fencing-alert).
const FencingAlert = "/usr/libexec/tnf/tnf-fencing-alert"

type node struct {
	ID       int
	Name, IP string
}

type param struct{ Name, Value string }

type fencing struct {
	ID, PowerOffID, Node, Delay string
	// Options are both levels': the BMC, and how its certificate is checked.
	Options []fencerun.Option
}

type agent struct {
	Agent  string
	Params []param
}

type inputs struct {
	ClusterName   string
	TokenMS       int64
	Nodes         []node
	Fencing       []fencing
	Crio, Kubelet agent
	NodeIPMap     string
	Etcd          []param
	FencingAlert  string
	DCDeadtime    string
}

// from turns a validated configuration (Defaults applied) into the templates' inputs; errors
// name the field of cluster.yaml.
func from(c clusterconfig.Config) (inputs, error) {
	if err := c.ValidateFencing(); err != nil {
		return inputs{}, err
	}
	in := inputs{ClusterName: c.ClusterName, TokenMS: c.Token.Milliseconds(), FencingAlert: FencingAlert, DCDeadtime: DCDeadtime}
	nodes := append([]clusterconfig.Node(nil), c.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for i, n := range nodes {
		in.Nodes = append(in.Nodes, node{ID: i + 1, Name: n.Name, IP: n.IP})
		// The password's value stays out of the CIB: only the reference goes in.
		cred, err := n.CredentialWith(pcmk.SecretRef)
		if err != nil {
			return inputs{}, err
		}
		// Both levels check the BMC's certificate the same way: level 1 takes its word that the
		// node is off, level 2 that it powered the node off.
		opts, err := fencerun.BMCOptions(cred)
		if err != nil {
			return inputs{}, fmt.Errorf("nodes[%s].bmc: %w", n.Name, err)
		}
		for _, o := range opts {
			if err := word(fmt.Sprintf("nodes[%s].bmc (%s)", n.Name, o.Name), o.Value); err != nil {
				return inputs{}, err
			}
		}
		// The device that fences the race winner waits longer: the winner shoots first. Setup
		// sizes a delay left out from the BMCs it measured; without a measure, the field's.
		delay := c.FenceDelay.Other.Duration
		if n.Name == c.FenceRaceWinner {
			delay = cmp.Or(c.FenceDelay.Winner.Duration, clusterconfig.UnmeasuredWinnerDelay)
		}
		in.Fencing = append(in.Fencing, fencing{ID: FenceDevice(n.Name), PowerOffID: PowerOffDevice(n.Name), Node: n.Name,
			Delay: pcsDuration(delay.Milliseconds()), Options: opts})
	}
	in.NodeIPMap = c.NodeIPMap()
	var err error
	if in.Crio, err = toAgent("resources.crio", c.Resources.Crio); err != nil {
		return inputs{}, err
	}
	if in.Kubelet, err = toAgent("resources.kubelet", c.Resources.Kubelet); err != nil {
		return inputs{}, err
	}
	if in.Etcd, err = params("resources.etcd", c.Resources.Etcd); err != nil {
		return inputs{}, err
	}
	if err := etcdnode.CheckValues(c.Resources.Etcd); err != nil {
		return inputs{}, fmt.Errorf("resources.etcd: %w", err)
	}
	for _, p := range in.Etcd {
		if p.Name == "node_ip_map" {
			return inputs{}, fmt.Errorf("resources.etcd.node_ip_map: comes from nodes[], not from here")
		}
	}
	return in, nil
}

func pcsDuration(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

func toAgent(field string, a clusterconfig.Agent) (agent, error) {
	if err := word(field+".agent", a.Agent); err != nil {
		return agent{}, err
	}
	if strings.Count(a.Agent, ":") < 1 {
		return agent{}, fmt.Errorf("%s.agent: %q is not class:type or class:provider:type", field, a.Agent)
	}
	ps, err := params(field+".params", a.Params)
	return agent{Agent: a.Agent, Params: ps}, err
}

func params(field string, m map[string]string) ([]param, error) {
	var out []param
	for k, v := range m {
		if err := word(field+"."+k, v); err != nil {
			return nil, err
		}
		if !parameterName.MatchString(k) {
			return nil, fmt.Errorf("%s: %q is not a parameter name (letters, digits, _ and -)", field, k)
		}
		out = append(out, param{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// parameterName is what OCF and Pacemaker name parameters with.
var parameterName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// word checks that a value is one pcs argument: each line of the pcs template is split at spaces.
func word(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s: empty", field)
	}
	if strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return fmt.Errorf("%s: %q holds white space, which a pcs argument here cannot", field, v)
	}
	return nil
}

func render(name string, in inputs) (string, error) {
	t, err := template.ParseFS(tnflayer.PCSTemplates, path.Join("pcs-templates", name))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, in); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Corosync renders corosync.conf.
func Corosync(c clusterconfig.Config) (string, error) {
	in, err := from(c)
	if err != nil {
		return "", err
	}
	return render("corosync.conf.tmpl", in)
}

// CorosyncKeys are the keys of Corosync's configuration map (cmap) that corosync.conf sets from
// the node configuration, with the values Corosync loads from Corosync(c): what setup compares
// with the running Corosync's.
func CorosyncKeys(c clusterconfig.Config) (map[string]string, error) {
	in, err := from(c)
	if err != nil {
		return nil, err
	}
	keys := map[string]string{"totem.cluster_name": in.ClusterName, "totem.token": strconv.FormatInt(in.TokenMS, 10)}
	for i, n := range in.Nodes {
		p := fmt.Sprintf("nodelist.node.%d.", i)
		keys[p+"ring0_addr"], keys[p+"name"], keys[p+"nodeid"] = n.IP, n.Name, strconv.Itoa(n.ID)
	}
	return keys, nil
}

// Commands renders the cluster configuration: the argument lists of pcs, each to be run as
// `pcs -f CIB ARGS...`.
func Commands(c clusterconfig.Config) ([][]string, error) {
	in, err := from(c)
	if err != nil {
		return nil, err
	}
	text, err := render("cluster.pcs.tmpl", in)
	if err != nil {
		return nil, err
	}
	var cmds [][]string
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			cmds = append(cmds, f)
		}
	}
	return cmds, nil
}

// Secret is one file of cibsecret's local store.
type Secret struct {
	Device string // the fence device that reads it
	Path   string
	Data   []byte
}

// Secrets are the files that hold the fence devices' passwords on a node, in cibsecret's
// format: the value, and beside it a .sign file with the value's MD5 (Pacemaker's integrity
// check of the pair, not a protection). passwords maps node names to their BMC passwords; both
// nodes get both, since either may run either device; both levels of a node use its password.
func Secrets(passwords map[string]string) []Secret {
	var out []Secret
	for n, pw := range passwords {
		for _, dev := range []string{FenceDevice(n), PowerOffDevice(n)} {
			p := path.Join(pcmk.SecretsDir, dev, "password")
			out = append(out, Secret{dev, p, []byte(pw + "\n")},
				Secret{dev, p + ".sign", []byte(fmt.Sprintf("%x\n", md5.Sum([]byte(pw))))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
