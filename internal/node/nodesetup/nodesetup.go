// Package nodesetup is `tnfctl setup`: from the node configuration under /etc/tnf to a running
// Corosync and Pacemaker, and on the fence race winner, once the peer has joined and every BMC
// credential passed its checks, the cluster configuration rendered from pcs-templates.
// Every step is idempotent: a second run changes nothing.
package nodesetup

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/apisecrets"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fenceagent"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencecheck"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/identity"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcsconfig"
)

// Paths on the node.
const (
	CorosyncConf = "/etc/corosync/corosync.conf"
	AuthkeyPath  = "/etc/corosync/authkey"
	// CorosyncLogDir holds the log file corosync.conf names.
	CorosyncLogDir = "/var/log/cluster"
	// Marker is written when setup completed, with the digest of the inputs it applied
	// (InputsDigest): tnf-setup.service's run at boot applies only what changed since.
	Marker = "/var/lib/tnf/setup.done"
	// FailedMarker holds why the last run failed, for tnfctl status and the metrics; a run that
	// completes removes it.
	FailedMarker = "/var/lib/tnf/setup.failed"
	// WaitingMarker exists while a run waits for the peer to join (on /run: a reboot ends it).
	WaitingMarker = "/run/tnf/setup-waiting"
	// RunLock is held by the run in progress.
	RunLock = "/run/tnf/setup.lock"
)

// Where setup stands on a node.
const (
	StateNotRun  = "not_run"
	StateWaiting = "waiting_for_peer"
	StateFailed  = "failed"
	StateDone    = "done"
	// StateGuest: the cluster-etcd-operator configured Pacemaker here; the layer writes none of
	// it (GuestMarker).
	StateGuest = "guest"
)

// States are the states in the order a node goes through them, then a guest's.
var States = []string{StateNotRun, StateWaiting, StateFailed, StateDone, StateGuest}

// State is where setup stands on this node, and why it failed when it did (or why it is a
// guest). Elsewhere the last run decides: a run after a completed one (tnf-reconfigure.service's,
// or by hand) that fails is a failure.
func State() (state, reason string) {
	// A guest stays one, whatever a later run did (guest.go).
	if why, err := recordedGuest(); err == nil && why != "" {
		return StateGuest, why
	}
	if _, err := os.Stat(WaitingMarker); err == nil {
		return StateWaiting, ""
	}
	if data, err := os.ReadFile(FailedMarker); err == nil {
		return StateFailed, strings.TrimSpace(string(data))
	}
	if SetUpBefore() {
		return StateDone, ""
	}
	return StateNotRun, ""
}

// SetUpBefore says whether a run completed on this node once: a later run that failed leaves a
// node set up, which may serve.
func SetUpBefore() bool {
	_, err := os.Stat(Marker)
	return err == nil
}

// Options tune a run.
type Options struct {
	Config string // cluster.yaml
	// Kubeconfig, where given, is the credential for the API instead of the node's own
	// (clusterconfig's UseKubeconfig).
	Kubeconfig string
	Node       string        // this node's name; default: the host name
	Wait       time.Duration // longest wait for Corosync, then for the peer
	PCS        string        // pcs binary
	Fence      fencecheck.Options
	Out        io.Writer // one line per step
	Services   Services  // default: systemd when it is the init system, else External
	// IfChanged: on a node set up before, run only when the inputs changed since the last
	// completed run (or a run failed since).
	IfChanged bool
}

// lockRun takes RunLock, waiting at most wait for a run in progress to end.
func lockRun(ctx context.Context, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(RunLock), 0o755); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	unlock, err := fsutil.Lock(lctx, RunLock)
	if err != nil {
		return nil, fmt.Errorf("another tnfctl setup still ran after %v (%s): %w", wait, RunLock, err)
	}
	return unlock, nil
}

// publishIdentity publishes this machine's identity (identity.Publish) for the race winner's
// check of the BMC entries, once the cluster takes attributes.
func publishIdentity(ctx context.Context, wait time.Duration, self string, step func(string, string)) error {
	id, err := identity.Local()
	if err != nil {
		return err
	}
	if err := waitFor(ctx, wait, "the cluster to take this node's identity", func(ctx context.Context) (bool, error) {
		return identity.Publish(ctx, attrs.CRM{}, self, id) == nil, nil
	}); err != nil {
		return err
	}
	step("identity", id.String())
	return nil
}

// stepsBound is what a run may take beside its waits: a few dozen tool calls and two BMC checks
// of at most a minute each.
const stepsBound = 15 * time.Minute

// Run sets this node up, and records a failure's reason in FailedMarker (a completed run removes
// it).
func Run(ctx context.Context, o Options) error {
	// The whole run is bounded: a tool that hangs outside the waits (pcs, cibadmin, a BMC check
	// past its own deadline) fails the run, and the unit's Restart=on-failure runs it again,
	// instead of holding the node inert for good. The race winner's five waits of o.Wait (Corosync,
	// its identity, the peer, both identities, the DC), and the steps between.
	ctx, cancel := context.WithTimeout(ctx, 5*o.Wait+stepsBound)
	defer cancel()
	// One run at a time: tnf-setup.service's at boot (which may wait an hour for the peer) and
	// tnf-reconfigure.service's write the same files, markers and CIB.
	unlock, err := lockRun(ctx, o.Wait)
	if err != nil {
		return err
	}
	defer unlock()
	if o.IfChanged {
		if done, err := alreadyApplied(o); err != nil || done {
			return err
		}
	}
	err = run(ctx, o)
	if rmErr := os.Remove(WaitingMarker); rmErr != nil && !os.IsNotExist(rmErr) && err == nil {
		err = rmErr
	}
	if err == nil {
		if rmErr := os.Remove(FailedMarker); rmErr != nil && !os.IsNotExist(rmErr) {
			return rmErr
		}
		return nil
	}
	if mkErr := os.MkdirAll(filepath.Dir(FailedMarker), 0o755); mkErr == nil {
		// Best effort: the reason also goes to the unit's journal through the returned error.
		_ = fsutil.WriteFileAtomic(FailedMarker, []byte(err.Error()+"\n"), 0o644)
	}
	return err
}

func run(ctx context.Context, o Options) error {
	// Read first, digested as read: a file that changes before it is parsed makes the next run
	// apply it again.
	raw, err := os.ReadFile(o.Config)
	if err != nil {
		return err
	}
	nc, err := clusterconfig.LoadNode(o.Config, o.Node)
	if err != nil {
		return err
	}
	if o.Kubeconfig != "" {
		nc.Config.UseKubeconfig(o.Kubeconfig)
	}
	cfg, self, peer := nc.Config, nc.Self, nc.Peer
	if o.Services == nil {
		o.Services = DetectServices()
	}
	step := func(name, result string) { fmt.Fprintf(o.Out, "setup: %s: %s\n", name, result) }
	// Before anything is written: a cluster the operator's jobs set up on this node stays as it
	// is, and the layer is its guest.
	if guest, err := becomeGuest(cfg.ClusterName, step); err != nil || guest {
		return err
	}

	conf, err := pcsconfig.Corosync(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Config, err)
	}
	// The key before corosync.conf, which lets Corosync's unit start.
	if cfg.SecretsFromAPI != nil {
		if err := fetchSecrets(ctx, o.Wait, cfg, step); err != nil {
			return err
		}
		// The operator's jobs may not have run yet on a DualReplica cluster: the API says so
		// before anything of a cluster is written. A node set up before was decided then (and its
		// later runs need no API).
		if !SetUpBefore() {
			if why, err := topologyGuest(ctx, o.Wait, cfg.SecretsFromAPI.KubeconfigFile, step); err != nil {
				return err
			} else if why != "" {
				return recordGuest(why, step)
			}
		}
	}
	// Before the files it names are read: one that changes meanwhile makes the next run apply it
	// again.
	digest, err := InputsDigest(raw, cfg)
	if err != nil {
		return err
	}
	key, err := authkey(cfg.CorosyncAuthkeyFile)
	if err != nil {
		return err
	}
	if _, err := writeStep(step, AuthkeyPath, key, 0o400); err != nil {
		return err
	}
	// Before corosync.conf, which lets Pacemaker's unit start: the seed must be in place by then.
	seeded, err := pcmk.Tools{}.SeedCIB(ctx, pcmk.CIBDir, pcsconfig.FirstCIBOptions())
	if err != nil {
		return fmt.Errorf("the first CIB in %s: %w", pcmk.CIBDir, err)
	}
	if seeded {
		step(filepath.Join(pcmk.CIBDir, "cib.xml"), "written (dc-deadtime "+pcsconfig.DCDeadtime+", before the first start)")
	}
	// corosync.conf logs there; RHEL's package makes it, Debian's does not.
	if err := os.MkdirAll(CorosyncLogDir, 0o750); err != nil {
		return err
	}
	if err := withdrawCorosyncConf(ctx, conf, self.Name); err != nil {
		return err
	}
	if _, err := writeStep(step, CorosyncConf, []byte(conf), 0o644); err != nil {
		return err
	}
	creds, secrets, err := credentials(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Config, err)
	}
	// The fence devices whose new password is written but not yet loaded: recorded before the
	// write, so that a run that fails before the restart leaves them for the next run.
	rotated, err := pendingDevices(secrets)
	if err != nil {
		return err
	}
	if err := writePending(rotated); err != nil {
		return err
	}
	for _, s := range secrets {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
			return err
		}
		if _, err := writeStep(step, s.Path, s.Data, 0o600); err != nil {
			return err
		}
	}
	if err := o.Services.KeepOutOfBoot(ctx, step, "crio.service", "kubelet.service"); err != nil {
		return err
	}
	if err := o.Services.Start(ctx, step, "corosync.service", "pacemaker.service"); err != nil {
		return err
	}
	tools := pcmk.Tools{}
	if err := waitFor(ctx, o.Wait, "Corosync to answer", func(ctx context.Context) (bool, error) {
		_, err := tools.Members(ctx)
		return err == nil, nil
	}); err != nil {
		return err
	}
	step("corosync", "running")
	if err := publishIdentity(ctx, o.Wait, self.Name, step); err != nil {
		return err
	}
	if err := reregister(ctx, tools, self.Name, rotated, step); err != nil {
		return err
	}
	if err := writePending(nil); err != nil {
		return err
	}
	if err := settleCorosync(ctx, cfg, conf, self.Name, peer.Name, tools, attrs.CRM{}, step); err != nil {
		return err
	}

	if cfg.FenceRaceWinner == self.Name {
		if err := configure(ctx, o, cfg, creds, peer.Name, SettingsVersion(digest), tools, step); err != nil {
			return err
		}
	} else {
		step("cluster configuration", "left to "+cfg.FenceRaceWinner+", the fence race winner")
	}
	// A change written while this run read the older files (MCO's, while a run at boot held the
	// lock) is not applied: the run fails, so that the next one applies it.
	if now, err := os.ReadFile(o.Config); err != nil {
		return err
	} else if again, err := InputsDigest(now, cfg); err != nil {
		return err
	} else if again != digest {
		return fmt.Errorf("%s or a file it names changed while setup ran: run tnfctl setup again to apply it", o.Config)
	}
	if err := (attrs.CRM{}).Set(ctx, self.Name, AttrSettings, SettingsVersion(digest), attrs.Forever); err != nil {
		return err
	}
	step("settings", SettingsVersion(digest)+" applied")
	if err := os.MkdirAll(filepath.Dir(Marker), 0o755); err != nil {
		return err
	}
	return markDone(time.Now(), digest)
}

// configure waits for the peer, checks every BMC credential, then applies the cluster
// configuration of settings version. Nothing is applied when a check fails: a cluster whose
// fencing cannot work must not start OpenShift.
func configure(ctx context.Context, o Options, cfg clusterconfig.Config, creds map[string]bmc.Credential, peer, version string, tools pcmk.Tools, step func(string, string)) error {
	step("peer", "waiting for "+peer+" to join")
	if err := os.MkdirAll(filepath.Dir(WaitingMarker), 0o755); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(WaitingMarker, nil, 0o644); err != nil {
		return err
	}
	if err := waitFor(ctx, o.Wait, peer+" to join the membership", func(ctx context.Context) (bool, error) {
		m, err := tools.Members(ctx)
		return err == nil && m.Nodes[peer], nil
	}); err != nil {
		return err
	}
	step("peer", peer+" joined")
	if err := os.Remove(WaitingMarker); err != nil {
		return err
	}
	// Each BMC entry must reach its own node's machine: swapped entries would make the first
	// fencing power off the survivor.
	var machines map[string]identity.Identity
	if err := waitFor(ctx, o.Wait, "both nodes' identities ("+identity.Attr+")", func(ctx context.Context) (bool, error) {
		m, ok, err := identity.Published(ctx, attrs.CRM{}, []string{cfg.Nodes[0].Name, cfg.Nodes[1].Name})
		machines = m
		return ok, err
	}); err != nil {
		return err
	}
	// The checks need no DC: they run while the controllers still wait for one (dc-deadtime).
	var failed []string
	for _, n := range cfg.Nodes {
		fo := o.Fence
		fo.Target, fo.Machines, fo.Member = n.Name, machines, true // both have joined
		fo.UnverifiedIdentity = n.BMC.UnverifiedIdentity
		for _, r := range fencecheck.Check(ctx, creds[n.Name], fo) {
			step("fence check "+n.Name, r.String())
			if !r.OK {
				failed = append(failed, n.Name+"'s "+r.String())
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("a BMC check failed: the cluster configuration was not applied (fix the node configuration, then run tnfctl setup again): %s",
			strings.Join(failed, "; "))
	}
	if cfg.FenceDelay.Winner.Duration == 0 {
		if d, ok := sizedBefore(ctx, tools, cfg.FenceRaceWinner, version); ok {
			cfg.FenceDelay.Winner.Duration = d
			step("fence delay", fmt.Sprintf("%v on the device that fences %s: kept, sized by an earlier setup of settings %s", d, cfg.FenceRaceWinner, version))
		} else {
			sizeWinnerDelay(ctx, &cfg, creds, o.Fence.Timeout, step)
		}
	}
	// The elected DC writes its options (dc-version and others) as the CIB's first
	// cluster_property_set. A configuration built offline before that carries a set of the same
	// id, and the CIB refuses the patch that would add a second one ("Update does not conform to
	// the configured schema").
	if err := waitFor(ctx, o.Wait, "Pacemaker to elect its DC", func(ctx context.Context) (bool, error) {
		_, set, err := tools.Attribute(ctx, "--type", "crm_config", "--name", "dc-version")
		return err == nil && set, nil
	}); err != nil {
		return err
	}
	cmds, err := pcsconfig.Commands(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Config, err)
	}
	// A restore keeps etcd stopped on both nodes (its target-role) until it gives it back: the
	// configuration, rebuilt, would start it again in the middle.
	if r, ok, err := etcdnode.ReadRestore(ctx, attrs.CRM{}); err != nil {
		return fmt.Errorf("reading whether a restore is under way: %w", err)
	} else if ok && r.UnderWay() {
		return fmt.Errorf("tnfctl restore on %s is under way (step %s): the cluster configuration is applied once it has ended "+
			"(tnfctl setup then, or the next reconfiguration)", r.Node, r.Step)
	}
	changed, err := tools.ApplyConfiguration(ctx, o.PCS, cmds)
	if err != nil {
		return err
	}
	if changed {
		step("cluster configuration", "applied")
	} else {
		step("cluster configuration", "unchanged")
	}
	return nil
}

// sizedBefore is the race winner's delay that a completed setup of the same settings version
// sized and applied, read from the live CIB: a later run keeps it instead of measuring again,
// so that setup run again on the same settings changes nothing (one slow answer of a loaded BMC
// moved it by a second). New settings size it again.
func sizedBefore(ctx context.Context, tools pcmk.Tools, winner, version string) (time.Duration, bool) {
	applied, _, err := (attrs.CRM{}).Get(ctx, winner, AttrSettings, attrs.Forever)
	if err != nil {
		return 0, false
	}
	delay, _, err := tools.FenceDeviceParam(ctx, pcsconfig.FenceDevice(winner), "pcmk_delay_base")
	if err != nil {
		return 0, false
	}
	return keptWinnerDelay(applied, version, delay)
}

// keptWinnerDelay is the delay a later setup keeps: the applied pcmk_delay_base (delay) where
// the winner's last completed setup applied this settings version, and that value is one setup
// sizes; ok is false where the delay must be sized.
func keptWinnerDelay(applied, version, delay string) (d time.Duration, ok bool) {
	if applied == "" || applied != version {
		return 0, false
	}
	d, err := time.ParseDuration(delay)
	if err != nil || d <= 0 || d > clusterconfig.MaxFenceDelay {
		return 0, false
	}
	return d, true
}

// latencyReads is how many power reads of each BMC size the race winner's fence delay.
const latencyReads = 3

// sizeWinnerDelay sets the delay of the device that fences the race winner from the slowest of
// latencyReads power reads of each BMC (clusterconfig.SizedWinner). A BMC that does not answer
// them leaves it unmeasured: the field's delay.
func sizeWinnerDelay(ctx context.Context, cfg *clusterconfig.Config, creds map[string]bmc.Credential, timeout time.Duration, step func(string, string)) {
	var slowest time.Duration
	for _, n := range cfg.Nodes {
		for range latencyReads {
			began := time.Now()
			r := bmc.ReadPower(ctx, creds[n.Name], bmc.Options{Timeout: timeout, UserAgent: "tnfctl setup"})
			if r.Err != nil {
				step("fence delay", fmt.Sprintf("%v on the device that fences %s, the field's: %s's BMC did not answer a read to size it (%v)",
					clusterconfig.UnmeasuredWinnerDelay, cfg.FenceRaceWinner, n.Name, r.Err))
				return
			}
			slowest = max(slowest, r.At.Sub(began))
		}
	}
	cfg.FenceDelay.Winner.Duration = clusterconfig.SizedWinner(cfg.FenceDelay.Other.Duration, slowest, fenceagent.FirstLevelReadTimeout)
	step("fence delay", fmt.Sprintf("%v on the device that fences %s: the BMCs' slowest answer took %v",
		cfg.FenceDelay.Winner.Duration, cfg.FenceRaceWinner, slowest.Round(time.Millisecond)))
}

// keptSecretsWait is how long a node whose secrets are all kept asks the API for newer ones
// before it goes on with the kept files: a cold boot of both nodes has no API until their etcd
// runs, and that needs this setup.
const keptSecretsWait = 10 * time.Second

// fetchSecrets brings the node's secrets from the API into their files (apisecrets). Until every
// file is there it waits for the credential and the API; once they are, the API is only asked
// for a change, and the kept files do when it does not answer.
func fetchSecrets(ctx context.Context, wait time.Duration, cfg clusterconfig.Config, step func(string, string)) error {
	kubeconfig := cfg.SecretsFromAPI.KubeconfigFile
	kept := apisecrets.Present(cfg)
	if kept {
		wait = keptSecretsWait
	}
	api := apiWait{name: "secrets", step: step}
	err := waitFor(ctx, wait, "the node's Secrets from the API (with "+kubeconfig+")", func(ctx context.Context) (bool, error) {
		files, changed, err := apisecrets.Sync(ctx, cfg, AuthkeyPath)
		if errors.Is(err, apisecrets.ErrKeyChanged) && kept {
			// The kept key is the one the peer runs with: go on with it, and say so.
			apisecrets.Report(files, changed, step)
			step("secrets", err.Error())
			return true, nil
		}
		if err != nil {
			return api.failed(err)
		}
		apisecrets.Report(files, changed, step)
		return true, nil
	})
	if err != nil && kept {
		step("secrets", fmt.Sprintf("not read from the API (%v): the files kept on the node do", api.last))
		return nil
	}
	return api.result(err)
}

// apiWait is what a waitFor over requests to the API keeps: each new reason a request fails for
// is one step line (what the administrator must fix), a reason waiting cannot end (refusal)
// ends the wait at once, and a wait that runs out names the last reason.
type apiWait struct {
	name string
	step func(string, string)
	last error
}

// failed is a waitFor condition's answer to a request that failed with err.
func (a *apiWait) failed(err error) (bool, error) {
	if a.last == nil || err.Error() != a.last.Error() {
		a.step(a.name, "waiting: "+err.Error())
	}
	a.last = err
	return false, refusal(err)
}

// result is the wait's error (from waitFor) with the last reason a request failed for.
func (a *apiWait) result(err error) error {
	if err != nil && a.last != nil && !errors.Is(err, a.last) {
		return fmt.Errorf("%w: %v", err, a.last)
	}
	return err
}

// refusal is err when waiting cannot end it: the API refused the credential, a Secret
// contradicts the node configuration, or the Corosync key changed (the Secrets' fetch: the
// topology's request fails only the first way).
func refusal(err error) error {
	if apisecrets.Forbidden(err) || errors.Is(err, apisecrets.ErrMismatch) || errors.Is(err, apisecrets.ErrKeyChanged) {
		return err
	}
	return nil
}

// authkey decodes the shared key the MachineConfig wrote as base64.
func authkey(path string) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corosyncAuthkeyFile: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(text)))
	if err != nil || len(key) < clusterconfig.MinAuthkey || len(key) > clusterconfig.MaxAuthkey {
		return nil, fmt.Errorf("corosyncAuthkeyFile: %s does not hold a base64 key of %d to %d bytes", path, clusterconfig.MinAuthkey, clusterconfig.MaxAuthkey)
	}
	return key, nil
}

// PendingMarker lists the fence devices whose new password a setup wrote and has not yet had
// them load: the next setup restarts them (tnf-keys-sync.service starts one while it exists).
const PendingMarker = "/var/lib/tnf/fence-devices-pending"

// pendingDevices are the devices an earlier run left in PendingMarker and those whose secret
// differs from what is written now.
func pendingDevices(secrets []pcsconfig.Secret) (map[string]bool, error) {
	devices := map[string]bool{}
	data, err := os.ReadFile(PendingMarker)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, id := range strings.Fields(string(data)) {
		devices[id] = true
	}
	for _, s := range secrets {
		if !fsutil.Holds(s.Path, s.Data) {
			devices[s.Device] = true
		}
	}
	return devices, nil
}

// writePending records devices in PendingMarker, or removes it when there are none.
func writePending(devices map[string]bool) error {
	if len(devices) == 0 {
		return fsutil.RemoveIfExists(PendingMarker)
	}
	if err := os.MkdirAll(filepath.Dir(PendingMarker), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(PendingMarker, []byte(strings.Join(slices.Sorted(maps.Keys(devices)), "\n")+"\n"), 0o644)
}

// RotationPending says whether a BMC password on this node has not reached its fence devices:
// its file differs from the cibsecret setup writes from it, or a setup left devices to restart.
func RotationPending(cfg clusterconfig.Config) (bool, error) {
	if _, err := os.Stat(PendingMarker); err == nil {
		return true, nil
	}
	_, secrets, err := credentials(cfg)
	if err != nil {
		return false, err
	}
	devices, err := pendingDevices(secrets)
	return len(devices) > 0, err
}

// credentials are the nodes' BMC credentials, by node, with the passwords read from their files,
// and the cibsecret files setup writes from them.
func credentials(cfg clusterconfig.Config) (map[string]bmc.Credential, []pcsconfig.Secret, error) {
	creds := map[string]bmc.Credential{}
	passwords := map[string]string{}
	for _, n := range cfg.Nodes {
		cred, err := n.Credential()
		if err != nil {
			return nil, nil, err
		}
		creds[n.Name], passwords[n.Name] = cred, cred.Password
	}
	return creds, pcsconfig.Secrets(passwords), nil
}

// reregister restarts the fence devices running on this node whose password changed (a rotated BMC
// credential). Pacemaker's fencer reads a device's cibsecret once and keeps the value for as long
// as the device stays registered: without a restart it would go on with the old password, its
// monitor would fail, and the device's recovery would drop any fencing queued meanwhile. A
// device that does not run yet (the first setup) reads the new files when it starts.
func reregister(ctx context.Context, tools pcmk.Tools, self string, rotated map[string]bool, step func(string, string)) error {
	if len(rotated) == 0 {
		return nil
	}
	st, err := tools.Status(ctx)
	if err != nil {
		step("fence devices", "not restarted, Pacemaker does not answer yet: they read the new passwords when they start")
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(rotated)) {
		// Only the devices running here read this node's cibsecret: a device on the peer reads
		// the peer's, which the peer's own setup writes; restarted from here before that, it
		// would start with the old password and the restart would wait out its timeout.
		if !slices.ContainsFunc(st.Resources, func(r pcmk.ResourceRole) bool { return r.ID == id }) {
			continue // not configured yet: it reads the new files when it starts
		}
		running := slices.IndexFunc(st.Resources, func(r pcmk.ResourceRole) bool { return r.ID == id && r.Role == "Started" && !r.Failed })
		if running >= 0 && st.Resources[running].Node != self {
			continue
		}
		// A start with the old password, between the BMC's change and this write, failed and
		// banned the device from its node: forget that first, or the restart below would wait
		// for a start the ban forbids. A device that is not running then starts again, here if
		// this is where it runs; on the peer it fails again until the peer's setup writes its
		// secret.
		if err := tools.Cleanup(ctx, id); err != nil {
			return fmt.Errorf("cleaning up %s to start it with its new password: %w", id, err)
		}
		if running < 0 {
			step(id, "failures cleaned up: it starts with its new password")
			continue
		}
		if err := tools.Restart(ctx, id, restartTimeout); err != nil {
			return fmt.Errorf("restarting %s to load its new password: %w", id, err)
		}
		step(id, "restarted with its new password")
	}
	return nil
}

// restartTimeout bounds a fence device's restart: its stop and start are quick, but the cluster
// may be finishing a transition first.
const restartTimeout = 2 * time.Minute

// writeStep writes a file unless it already holds data with mode, and says whether it wrote.
func writeStep(step func(string, string), path string, data []byte, mode os.FileMode) (bool, error) {
	written, err := fsutil.WriteFileIfChanged(path, data, mode)
	if err != nil {
		return false, err
	}
	result := "unchanged"
	if written {
		result = "written"
	}
	step(path, result)
	return written, nil
}

// waitFor polls ok once a second until it is true, for at most limit.
func waitFor(ctx context.Context, limit time.Duration, what string, ok func(context.Context) (bool, error)) error {
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// Each look has the wait's deadline: a tool that hangs (corosync-cmapctl on a Corosync that
	// does not answer) ends with it.
	err := poll.Every(wctx, time.Second, ok)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("gave up after %v waiting for %s", limit, what)
	}
	return err
}
