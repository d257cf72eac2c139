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

// SettingsVersion is the short form of an InputsDigest that AttrSettings publishes: enough to
// tell two versions apart, and nothing of the secrets the digest covers.
func SettingsVersion(digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	return hex[:min(12, len(hex))]
}

// inputsPrefix starts the Marker's line that names the inputs a completed run applied.
const inputsPrefix = "inputs "

// InputsDigest is the SHA-256 of what setup applies on this node: the node configuration and the
// files it names (the Corosync key, the BMC passwords and CA bundles). A file that is missing
// counts as such, so that its arrival is a change. Secrets go into the digest only: the Marker
// holds no value of theirs.
func InputsDigest(configPath string, cfg clusterconfig.Config) (string, error) {
	files := []string{cfg.CorosyncAuthkeyFile}
	for _, n := range cfg.Nodes {
		files = append(files, n.BMC.PasswordFile, n.BMC.CAFile)
	}
	files = slices.DeleteFunc(files, func(p string) bool { return p == "" })
	slices.Sort(files)
	files = slices.Compact(files)
	h := sha256.New()
	for _, p := range append([]string{configPath}, files...) {
		data, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "%s absent\n", p)
			continue
		case err != nil:
			return "", err
		}
		// Length-prefixed, so that no two sets of files digest alike.
		fmt.Fprintf(h, "%s %d\n", p, len(data))
		h.Write(data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// markDone writes the Marker: when setup completed, and from which inputs.
func markDone(now time.Time, digest string) error {
	return fsutil.WriteFileAtomic(Marker, []byte(now.UTC().Format(time.RFC3339)+"\n"+inputsPrefix+digest+"\n"), 0o644)
}

// applied reads the Marker: when setup last completed and the digest of the inputs it applied
// ("" from a release that recorded none).
func applied() (at, digest string, err error) {
	data, err := os.ReadFile(Marker)
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, l := range lines[1:] {
		if d, ok := strings.CutPrefix(l, inputsPrefix); ok {
			digest = d
		}
	}
	return lines[0], digest, nil
}

// upToDate says whether a run would apply nothing new: setup completed, no run failed since,
// and the inputs are those it applied. A Marker without a digest (written by a release before
// this one) is taken as applying the inputs of today: that release's run applied the files then
// on disk, and a change since could not be seen.
func upToDate(digest string) (bool, string, error) {
	if _, err := os.Stat(FailedMarker); err == nil {
		return false, "", nil
	}
	at, was, err := applied()
	if errors.Is(err, fs.ErrNotExist) {
		return false, "", nil
	} else if err != nil {
		return false, "", err
	}
	if was == "" {
		if err := markDone(markerTime(at), digest); err != nil {
			return false, "", err
		}
		was = digest
	}
	return was == digest, at, nil
}

// markerTime reads the Marker's time, or now where it is unreadable (a Marker written by hand).
func markerTime(at string) time.Time {
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t
	}
	return time.Now()
}

// alreadyApplied says, and prints, that a run would apply nothing new (upToDate). A node
// configuration that cannot be read is left to the run, which says what is wrong and records it.
func alreadyApplied(o Options) (bool, error) {
	nc, err := clusterconfig.LoadNode(o.Config, o.Node)
	if err != nil {
		return false, nil
	}
	digest, err := InputsDigest(o.Config, nc.Config)
	if err != nil {
		return false, nil
	}
	ok, at, err := upToDate(digest)
	if ok {
		fmt.Fprintf(o.Out, "setup: %s: unchanged since the run completed at %s: nothing to apply\n", o.Config, at)
	}
	return ok, err
}
