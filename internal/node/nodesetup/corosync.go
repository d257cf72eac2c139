package nodesetup

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcsconfig"
)

// Node attributes (lifetime forever, like the file they describe) through which the two nodes'
// setups bring a Corosync setting to both nodes in one step, never one node ahead of the other.
const (
	// AttrCorosyncConf is the SHA-256 of the corosync.conf the node's last setup wrote.
	AttrCorosyncConf = "tnf-corosync-conf"
	// AttrCorosyncReload says which settings of the node's corosync.conf its Corosync does not
	// run yet and a reload would apply, as "key old -> new, ..." (empty or absent: none). Either node's setup reloads both
	// Corosyncs once the two files are the same, and clears both.
	AttrCorosyncReload = "tnf-corosync-reload"
	// AttrCorosyncRestart says which settings of the node's corosync.conf its Corosync reads
	// only when it starts (empty or absent: none).
	AttrCorosyncRestart = "tnf-corosync-restart"
)

// CorosyncPending holds what this node's Corosync does not run yet of its corosync.conf, while
// anything does: tnf-setup.service's run at boot then runs setup (decideRun) even where the
// inputs did not change, so that the marks (AttrCorosyncReload, AttrCorosyncRestart) go once the
// boot's Corosync read the file.
const CorosyncPending = "/var/lib/tnf/corosync-pending"

// withdrawCorosyncConf deletes this node's AttrCorosyncConf before a corosync.conf of other
// content replaces the one its running Corosync may be reloaded from: until settleCorosync
// publishes the new digest, the peer must not take the old one for this node's file and reload
// both. A Corosync that does not run reads the new file when it starts.
func withdrawCorosyncConf(ctx context.Context, conf, self string) error {
	if fsutil.Holds(CorosyncConf, []byte(conf)) {
		return nil
	}
	if _, err := (pcmk.Tools{}).Members(ctx); err != nil {
		return nil // Corosync does not run
	}
	if err := (attrs.CRM{}).Set(ctx, self, AttrCorosyncConf, "", attrs.Forever); err != nil {
		return fmt.Errorf("withdrawing %s before %s changes: %w", AttrCorosyncConf, CorosyncConf, err)
	}
	return nil
}

// reloadable are the keys of pcsconfig.CorosyncKeys that `corosync-cfgtool -R` changes in a
// running Corosync (corosync.conf(5): the token is read again at a reload). The others (the
// cluster's name, the nodes' names, IDs and addresses) take effect at Corosync's start only.
var reloadable = map[string]bool{"totem.token": true}

// corosyncDrift compares the keys corosync.conf sets (file) with those Corosync runs with
// (running): the keys that differ and a reload applies, and those that wait for Corosync's
// restart, sorted. A node the file no longer lists is one of the latter.
func corosyncDrift(file, running map[string]string) (reload, restart []string) {
	for k, v := range file {
		switch {
		case running[k] == v:
		case reloadable[k]:
			reload = append(reload, k)
		default:
			restart = append(restart, k)
		}
	}
	for k := range running {
		if _, listed := file[k]; !listed && strings.HasPrefix(k, "nodelist.node.") && isNodeKey(k) {
			restart = append(restart, k)
		}
	}
	slices.Sort(reload)
	slices.Sort(restart)
	return reload, restart
}

// isNodeKey: a key of a node's entry that CorosyncKeys sets (nodelist.node.N.ring0_addr, .name,
// .nodeid).
func isNodeKey(k string) bool {
	for _, s := range []string{".ring0_addr", ".name", ".nodeid"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// corosyncState is what one node's setup knows of both nodes' Corosync settings.
type corosyncState struct {
	// Same: the two nodes' setups wrote the same corosync.conf (AttrCorosyncConf).
	Same bool
	// Reload and Restart: this node's keys that differ between its file and its Corosync
	// (corosyncDrift).
	Reload, Restart []string
	// PeerReload and PeerRestart: the peer's published AttrCorosyncReload, AttrCorosyncRestart.
	PeerReload, PeerRestart bool
}

// shouldReload decides whether this node's setup reloads both Corosyncs: when both files are
// the same, a reload would apply something on either node, and neither waits for a restart (a
// reload of a changed node list or address is never attempted). A node whose own Corosync
// already runs its file reloads for a peer that waits: the peer's Corosync may never have been
// reloaded (this node's Corosync restarted with the new file, or the peer's setup ran first).
func shouldReload(s corosyncState) bool {
	return s.Same && len(s.Restart) == 0 && !s.PeerRestart && (len(s.Reload) > 0 || s.PeerReload)
}

// settleCorosync brings both nodes' Corosyncs to the settings of the corosync.conf setup wrote
// (conf), where a reload can (shouldReload), and publishes what is still pending on this node.
// A setting only a restart applies is said, not applied: restarting Corosync under a running
// cluster is a node leaving it (docs/operate.md, Changing a setting).
func settleCorosync(ctx context.Context, cfg clusterconfig.Config, conf, self, peer string, tools pcmk.Tools, store attrs.Store, step func(string, string)) error {
	file, err := pcsconfig.CorosyncKeys(cfg)
	if err != nil {
		return err
	}
	running, err := tools.CorosyncConfig(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(conf))
	digest := hex.EncodeToString(sum[:])
	if err := store.Set(ctx, self, AttrCorosyncConf, digest, attrs.Forever); err != nil {
		return err
	}
	peerAttr := func(name string) (string, error) {
		v, _, err := store.Get(ctx, peer, name, attrs.Forever)
		return v, err
	}
	theirs, err := peerAttr(AttrCorosyncConf)
	if err != nil {
		return err
	}
	peerReload, err := peerAttr(AttrCorosyncReload)
	if err != nil {
		return err
	}
	peerRestart, err := peerAttr(AttrCorosyncRestart)
	if err != nil {
		return err
	}
	st := corosyncState{Same: theirs == digest, PeerReload: peerReload != "", PeerRestart: peerRestart != ""}
	st.Reload, st.Restart = corosyncDrift(file, running)
	if shouldReload(st) {
		what := cmp.Or(strings.Join(changes(st.Reload, file, running), ", "), peer+"'s "+peerReload)
		if err := tools.ReloadCorosync(ctx); err != nil {
			return fmt.Errorf("corosync-cfgtool -R (%s): %w", what, err)
		}
		step("corosync", what+": reloaded on both nodes")
		// The peer's Corosync read the same file.
		if err := store.Set(ctx, peer, AttrCorosyncReload, "", attrs.Forever); err != nil {
			return err
		}
		if running, err = tools.CorosyncConfig(ctx); err != nil {
			return err
		}
		st.Reload, st.Restart = corosyncDrift(file, running)
	}
	reload := strings.Join(changes(st.Reload, file, running), ", ")
	restart := strings.Join(changes(st.Restart, file, running), ", ")
	switch {
	case restart != "":
		keys := slices.Sorted(slices.Values(append(slices.Clone(st.Restart), st.Reload...)))
		step("corosync", fmt.Sprintf("%s changed in %s: Corosync reads %s only when it starts, so it runs with the old values until "+
			"this node reboots", strings.Join(changes(keys, file, running), ", "), CorosyncConf, them(keys)))
	case reload != "":
		step("corosync", reload+": waits for "+peer+"'s setup to write the same "+CorosyncConf+", which then reloads Corosync on both nodes")
	}
	if err := markPending(strings.Join(slices.DeleteFunc([]string{reload, restart}, func(s string) bool { return s == "" }), ", ")); err != nil {
		return err
	}
	// crm_attribute takes ASCII only.
	ascii := strings.NewReplacer(" → ", " -> ")
	if err := store.Set(ctx, self, AttrCorosyncReload, ascii.Replace(reload), attrs.Forever); err != nil {
		return err
	}
	return store.Set(ctx, self, AttrCorosyncRestart, ascii.Replace(restart), attrs.Forever)
}

// markPending writes CorosyncPending with what is pending, or removes it when nothing is.
func markPending(pending string) error {
	if pending == "" {
		return fsutil.RemoveIfExists(CorosyncPending)
	}
	if err := os.MkdirAll(filepath.Dir(CorosyncPending), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(CorosyncPending, []byte(pending+"\n"), 0o644)
}

// changes says each key's running and new value.
func changes(keys []string, file, running map[string]string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %s → %s", k, cmp.Or(running[k], "(none)"), cmp.Or(file[k], "(none)")))
	}
	return out
}

func them(keys []string) string {
	if len(keys) == 1 {
		return "it"
	}
	return "them"
}
