// Package toolanswers keeps what a version of the HA stack's tools (crm_attribute, cibadmin,
// crm_mon, the Corosync tools) answered to the command lines the layer runs: test/cluster
// captures them on a real node of each stack (make pacemaker-answers), and the parsers' tests
// read every version's (internal/node/pacemaker/pcmk), so that what the layer reads is checked
// against each version's real answers, not a hand-written one.
package toolanswers

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// The cases: what was asked, in which state of the node.
const (
	AttributeNotSet         = "crm_attribute: a node attribute not set"
	TransientNotSet         = "crm_attribute: a transient (reboot) node attribute not set"
	PropertyNotSet          = "crm_attribute: a cluster property not set"
	AttributeSet            = "crm_attribute: a node attribute set"
	AttributeOfUnknownNode  = "crm_attribute: an attribute of a node the cluster does not know"
	AttributeOfAbsentPeer   = "crm_attribute: an attribute of the peer, which has not joined since this node booted"
	DeleteNotSet            = "crm_attribute --delete: a node attribute not set"
	DeleteTransientNotSet   = "crm_attribute --delete: a transient node attribute not set"
	SectionAbsent           = "cibadmin --replace: a section the CIB does not have (fencing-topology)"
	AttributeWithoutCluster = "crm_attribute: a node attribute, Pacemaker and Corosync stopped"
	Status                  = "crm_mon: both nodes online, etcd promoted on both"
	StatusAlone             = "crm_mon: this node alone, waiting for its peer"
	ConfigurationSection    = "cibadmin --query --scope configuration: the layer's cluster"
	Nodelist                = "corosync-cmapctl -b nodelist.node.: both nodes joined"
	Runtime                 = "corosync-cmapctl -b runtime.: both nodes joined"
	Quorum                  = "corosync-quorumtool -s: both nodes joined"
	QuorumAlone             = "corosync-quorumtool -s: this node alone, waiting for all"
	QuorumWithoutCorosync   = "corosync-quorumtool -s: Corosync stopped"
	Links                   = "corosync-cfgtool -s: both nodes joined"
)

// Answer is one command line's answer.
type Answer struct {
	Args   []string `json:"args"`
	Exit   int      `json:"exit"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
}

// Stack is one version's answers.
type Stack struct {
	// Versions is what the tools said of themselves ("Pacemaker 3.0.0; Corosync Cluster
	// Engine, version '3.1.9'; 0.12.0.2").
	Versions string            `json:"versions"`
	Answers  map[string]Answer `json:"answers"`
}

// Dir is where the answers are kept, relative to the repository's root.
const Dir = "internal/node/pacemaker/pcmk/testdata/answers"

// FileName is a stack's file in Dir: pacemaker-<version>.json, the version from pacemakerd's
// "Pacemaker 3.0.0".
func FileName(pacemakerVersion string) string {
	return "pacemaker-" + strings.TrimPrefix(strings.TrimSpace(pacemakerVersion), "Pacemaker ") + ".json"
}

// Write writes s to path whole (a temporary file, renamed).
func Write(path string, s Stack) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// Load reads every stack's answers in dir, by file name, sorted.
func Load(dir string) (names []string, stacks map[string]Stack, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "pacemaker-*.json"))
	if err != nil {
		return nil, nil, err
	}
	stacks = map[string]Stack{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var s Stack
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		stacks[filepath.Base(f)] = s
	}
	return slices.Sorted(maps.Keys(stacks)), stacks, nil
}
