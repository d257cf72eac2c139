package nodesetup

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// AttrSettings (a node attribute, lifetime forever) is the version of the settings a node's last
// completed setup applied: SettingsVersion of its inputs. Both nodes hold the same files, so a
// pair that runs the same settings shows the same version (tnfctl status).
const AttrSettings = "tnf-settings"

// SettingsVersion is the short form of an InputsDigest that AttrSettings publishes. Neither it
// nor the whole digest in the Marker lets anyone guess a weak BMC password offline only because
// the digest covers the cluster's random Corosync key too (a node configuration without one is
// refused).
func SettingsVersion(digest string) string {
	sum := strings.TrimPrefix(digest, "sha256:")
	return sum[:min(12, len(sum))]
}

// inputsPrefix starts the Marker's line that names the inputs a completed run applied.
const inputsPrefix = "inputs "

// InputsDigest is the SHA-256 of what setup applies on this node: the node configuration as it
// was read (config) and the files it names (the Corosync key, the BMC passwords and CA bundles).
// A file that is missing counts as such, so that its arrival is a change.
func InputsDigest(config []byte, cfg clusterconfig.Config) (string, error) {
	files := []string{cfg.CorosyncAuthkeyFile}
	for _, n := range cfg.Nodes {
		files = append(files, n.BMC.PasswordFile, n.BMC.CAFile)
	}
	files = slices.DeleteFunc(files, func(p string) bool { return p == "" })
	slices.Sort(files)
	files = slices.Compact(files)
	h := sha256.New()
	// Length-prefixed, so that no two sets of files digest alike.
	fmt.Fprintf(h, "cluster.yaml %d\n", len(config))
	h.Write(config)
	for _, p := range files {
		data, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "%s absent\n", p)
			continue
		case err != nil:
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(data))
		h.Write(data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// markDone writes the Marker: when setup completed, and from which inputs.
func markDone(now time.Time, digest string) error {
	return fsutil.WriteFileAtomic(Marker, []byte(now.UTC().Format(time.RFC3339)+"\n"+inputsPrefix+digest+"\n"), 0o644)
}

// marker is what the Marker says: whether a run completed, when, and the digest of the inputs
// it applied ("" from a release that recorded none).
type marker struct {
	Exists     bool
	At, Digest string
}

func readMarker() (marker, error) {
	data, err := os.ReadFile(Marker)
	if errors.Is(err, fs.ErrNotExist) {
		return marker{}, nil
	} else if err != nil {
		return marker{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	m := marker{Exists: true, At: lines[0]}
	for _, l := range lines[1:] {
		if d, ok := strings.CutPrefix(l, inputsPrefix); ok {
			m.Digest = d
		}
	}
	return m, nil
}

// runDecision is what tnfctl setup --if-changed does.
type runDecision int

const (
	runSetup runDecision = iota
	// skipRun: the last completed run applied these inputs.
	skipRun
	// adoptInputs: a Marker without a digest (written by a release before this one) is taken as
	// applying the inputs of today, recorded without a run: that release's run applied the files
	// then on disk, and a change since could not be seen. Running instead would apply this
	// release's cluster configuration on the race winner beside a peer that may still run the
	// older release (CHANGELOG: run setup once both run this one).
	adoptInputs
)

// decideRun: run where no run completed, where a run failed since, where the inputs changed, and
// where a Corosync setting was pending (CorosyncPending).
func decideRun(failed, corosyncPending bool, m marker, digest string) runDecision {
	switch {
	case failed, corosyncPending, !m.Exists:
		return runSetup
	case m.Digest == "":
		return adoptInputs
	case m.Digest == digest:
		return skipRun
	}
	return runSetup
}

// alreadyApplied says, and prints, that a run would apply nothing new (decideRun). A node
// configuration that cannot be read is left to the run, which says what is wrong and records it.
func alreadyApplied(o Options) (bool, error) {
	raw, err := os.ReadFile(o.Config)
	if err != nil {
		return false, nil
	}
	nc, err := clusterconfig.LoadNode(o.Config, o.Node)
	if err != nil {
		return false, nil
	}
	digest, err := InputsDigest(raw, nc.Config)
	if err != nil {
		return false, nil
	}
	_, err = os.Stat(FailedMarker)
	failed := err == nil
	_, err = os.Stat(CorosyncPending)
	pending := err == nil
	m, err := readMarker()
	if err != nil {
		return false, err
	}
	switch decideRun(failed, pending, m, digest) {
	case adoptInputs:
		if err := markDone(markerTime(m.At), digest); err != nil {
			return false, err
		}
		fmt.Fprintf(o.Out, "setup: %s: taken as applied by the run completed at %s (an earlier release's, which recorded no digest)\n", o.Config, m.At)
		return true, nil
	case skipRun:
		fmt.Fprintf(o.Out, "setup: %s: unchanged since the run completed at %s: nothing to apply\n", o.Config, m.At)
		return true, nil
	}
	return false, nil
}

// markerTime reads the Marker's time, or now where it is unreadable (a Marker written by hand).
func markerTime(at string) time.Time {
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t
	}
	return time.Now()
}
