package nodesetup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcsconfig"
)

// AttrCorosyncConf (a node attribute, lifetime forever like the file) is the SHA-256 of the
// corosync.conf a node's setup wrote, published while that file differs from what its Corosync
// runs. The node whose setup finds its peer's equal to its own reloads Corosync on both: a
// setting reaches the two nodes in one step, never one node ahead of the other.
const AttrCorosyncConf = "tnf-corosync-conf"

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

// settleCorosync brings the running Corosync to the settings of the corosync.conf setup wrote
// (conf), where a reload can: once the peer's setup wrote the same file, one reload for both
// nodes. A setting only a restart applies is said, not applied: restarting Corosync under a
// running cluster is a node leaving it (docs/operate.md, Changing a setting).
func settleCorosync(ctx context.Context, cfg clusterconfig.Config, conf, self, peer string, tools pcmk.Tools, store attrs.Store, step func(string, string)) error {
	file, err := pcsconfig.CorosyncKeys(cfg)
	if err != nil {
		return err
	}
	running, err := tools.CorosyncConfig(ctx)
	if err != nil {
		return err
	}
	reload, restart := corosyncDrift(file, running)
	if len(restart) > 0 {
		step("corosync", fmt.Sprintf("%s changed in %s: Corosync reads %s only when it starts, so it runs with the old values until "+
			"each node's cluster stack restarts, one node at a time (a reboot)", strings.Join(changes(restart, file, running), ", "), CorosyncConf, them(restart)))
		return nil
	}
	if len(reload) == 0 {
		return nil
	}
	sum := sha256.Sum256([]byte(conf))
	digest := hex.EncodeToString(sum[:])
	if err := store.Set(ctx, self, AttrCorosyncConf, digest, attrs.Forever); err != nil {
		return err
	}
	theirs, _, err := store.Get(ctx, peer, AttrCorosyncConf, attrs.Forever)
	if err != nil {
		return err
	}
	what := strings.Join(changes(reload, file, running), ", ")
	if theirs != digest {
		step("corosync", what+": waits for "+peer+"'s setup to write the same "+CorosyncConf+", which then reloads Corosync on both nodes")
		return nil
	}
	if err := tools.ReloadCorosync(ctx); err != nil {
		return fmt.Errorf("corosync-cfgtool -R (%s): %w", what, err)
	}
	step("corosync", what+": reloaded on both nodes")
	return nil
}

// changes says each key's running and new value.
func changes(keys []string, file, running map[string]string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %s → %s", k, orNone(running[k]), orNone(file[k])))
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

func them(keys []string) string {
	if len(keys) == 1 {
		return "it"
	}
	return "them"
}
