package pcmk

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// ApplyConfiguration makes the live CIB's resources, constraints, fencing levels, alerts and
// cluster options what the pcs commands build, the way `pcs cluster cib-push --diff-against`
// does: a copy of the live CIB with those emptied is rebuilt offline with `pcs -f`, and only the
// difference is patched into the live CIB. Node attributes, the etcd agent's claim and
// everything else not built by the commands stay. An unchanged configuration is not touched: it
// returns false. The patch carries no CIB version (a status update would void it), so call it
// once the DC has written its options: a set the offline copy lacked would be created twice.
func (t Tools) ApplyConfiguration(ctx context.Context, pcs string, commands [][]string) (bool, error) {
	dir, err := os.MkdirTemp("", "tnf-cib-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	live, next, patch := filepath.Join(dir, "live.xml"), filepath.Join(dir, "next.xml"), filepath.Join(dir, "patch.xml")
	xml, err := t.Run(ctx, "cibadmin", "--query")
	if err != nil {
		return false, err
	}
	for _, f := range []string{live, next} {
		if err := os.WriteFile(f, []byte(xml), 0o600); err != nil {
			return false, err
		}
	}
	offline := t.onFile(next)
	// Constraints and fencing levels first: they name resources. The levels and the alerts are
	// sections a CIB has only once something was put there (cibadmin: no such object).
	for _, scope := range []string{"constraints", "fencing-topology", "alerts", "resources"} {
		_, err := offline.Run(ctx, "cibadmin", "--replace", "--scope", scope, "--xml-text", "<"+scope+"/>")
		optional := scope == "fencing-topology" || scope == "alerts"
		if err != nil && !(optional && NotSet(err)) {
			return false, err
		}
	}
	if err := t.runPCS(ctx, pcs, dir, next, commands); err != nil {
		return false, err
	}
	// crm_diff exits 0 when the two are equal and 1 with the patch on standard output.
	diff, err := t.Run(ctx, "crm_diff", "--original", live, "--new", next, "--no-version")
	switch command.ExitCode(err) {
	case 0:
		return false, nil
	case 1:
	default:
		return false, err
	}
	if err := os.WriteFile(patch, []byte(diff), 0o600); err != nil {
		return false, err
	}
	if _, err := t.Run(ctx, "cibadmin", "--patch", "--xml-file", patch); err != nil {
		return false, err
	}
	return true, nil
}

//go:embed pcsbatch.py
var pcsBatch []byte

// runPCS runs `pcs -f cib ARGS...` for each of commands, in order, in one Python process
// (pcsbatch.py, written into dir): the interpreter is the one pcs's own script names, since
// pcs's modules live in that Python's packages only.
func (t Tools) runPCS(ctx context.Context, pcs, dir, cib string, commands [][]string) error {
	python, err := scriptInterpreter(pcs)
	if err != nil {
		return err
	}
	script := filepath.Join(dir, "pcsbatch.py")
	if err := os.WriteFile(script, pcsBatch, 0o600); err != nil {
		return err
	}
	argvs := make([][]string, len(commands))
	for i, args := range commands {
		argvs[i] = append([]string{"-f", cib}, args...)
	}
	in, err := json.Marshal(argvs)
	if err != nil {
		return err
	}
	_, err = command.Cmd{Env: t.Env, Stdin: bytes.NewReader(in)}.Run(ctx, python[0], append(python[1:], script)...)
	return err
}

// scriptInterpreter is the interpreter line of the script found as name in PATH: the program
// and its one optional argument, as the kernel reads them.
func scriptInterpreter(name string) ([]string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: not a script with an interpreter line (#!)", path)
	}
	program, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if arg = strings.TrimSpace(arg); arg != "" {
		return []string{program, arg}, nil
	}
	return []string{program}, nil
}

// ConfirmFenced tells Pacemaker that node is safely down, as a fence device would have.
func (t Tools) ConfirmFenced(ctx context.Context, node string) error {
	_, err := t.Run(ctx, "stonith_admin", "--confirm", node)
	return err
}

// Fence asks Pacemaker's fencer to reboot node through its fence devices and levels, as a fault
// would, and waits for the result, at most timeout (stonith_admin's own bound).
func (t Tools) Fence(ctx context.Context, node string, timeout time.Duration) error {
	_, err := t.Run(ctx, "stonith_admin", "--reboot", node, "--timeout", strconv.Itoa(int(timeout.Seconds())))
	return err
}

// Restart restarts a resource through the cluster (crm_resource --restart: stopped, then
// started again, waiting for each, at most timeout).
func (t Tools) Restart(ctx context.Context, id string, timeout time.Duration) error {
	_, err := t.Run(ctx, "crm_resource", "--resource", id, "--restart", "--timeout", fmt.Sprintf("%ds", int(timeout.Seconds())))
	return err
}

// SetTargetRole sets the role the cluster keeps resource id in, its target-role meta attribute,
// as pcs resource disable and enable do: "Stopped" stops it everywhere, "" deletes the attribute
// (one that is not set is no error) and the resource runs again where it may.
func (t Tools) SetTargetRole(ctx context.Context, id, role string) error {
	args := []string{"--resource", id, "--meta"}
	if role == "" {
		args = append(args, "--delete-parameter", "target-role")
	} else {
		args = append(args, "--set-parameter", "target-role", "--parameter-value", role)
	}
	_, err := t.Run(ctx, "crm_resource", args...)
	if role == "" && NotSet(err) {
		return nil
	}
	return err
}

// Ban keeps resource id off node (crm_resource --ban: a location constraint of -INFINITY, named
// cli-ban-<id>-on-<node>) until Clear.
func (t Tools) Ban(ctx context.Context, id, node string) error {
	_, err := t.Run(ctx, "crm_resource", "--ban", "--resource", id, "--node", node)
	return err
}

// Clear removes the constraints Ban (and crm_resource --move) made for resource id on node.
func (t Tools) Clear(ctx context.Context, id, node string) error {
	_, err := t.Run(ctx, "crm_resource", "--clear", "--resource", id, "--node", node)
	return err
}

// Cleanup forgets resource's failures (crm_resource --cleanup): the scheduler starts it again
// where it may run.
func (t Tools) Cleanup(ctx context.Context, id string) error {
	_, err := t.Run(ctx, "crm_resource", "--cleanup", "--resource", id)
	return err
}

// Fail tells the cluster that resource failed on node (crm_resource --fail): the controller
// records a failed operation, as a failed monitor would, and the scheduler recovers the
// resource at once, without waiting for the next monitor.
func (t Tools) Fail(ctx context.Context, resource, node string) error {
	_, err := t.Run(ctx, "crm_resource", "--fail", "--resource", resource, "--node", node)
	return err
}

// RecheckOption is the cluster option Recheck writes: the layer's own, which nothing reads.
const RecheckOption = "tnf-recheck"

// Recheck makes the scheduler run again: every change of the configuration does, so the time is
// written into RecheckOption. pcs quorum unblock flips startup-fencing and puts it back instead,
// which an interruption between the two writes leaves off; a write of an option nothing reads
// leaves no safety option changed, whatever happens.
func (t Tools) Recheck(ctx context.Context) error {
	_, err := t.Run(ctx, "crm_attribute", "--type", "crm_config", "--name", RecheckOption, "--update", strconv.FormatInt(time.Now().UnixNano(), 10))
	return err
}

// CIBDir is where Pacemaker keeps its CIB: cib.xml, its digest, and the backups of earlier
// versions.
const CIBDir = "/var/lib/pacemaker/cib"

// SeedCIB gives a node whose Pacemaker never ran (dir holds no CIB file of any kind) a first
// CIB holding the cluster options, so they hold from the controller's first start on, before
// any configuration can be applied through a DC. A dir that holds a CIB, or a backup of one, is
// left as it is and false is returned. The file is made with Pacemaker's own tools (cibadmin
// --empty, then crm_attribute on the file), owned as dir is (the package gives it to the user
// Pacemaker runs as), and renamed into place whole. Without a digest file beside it,
// pacemaker-based takes it and writes one with its next change.
func (t Tools) SeedCIB(ctx context.Context, dir string, options [][2]string) (bool, error) {
	if existing, err := filepath.Glob(filepath.Join(dir, "cib*")); err != nil || len(existing) > 0 {
		return false, err
	}
	info, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	owner, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false, fmt.Errorf("%s: no owner to read", dir)
	}
	empty, err := t.Run(ctx, "cibadmin", "--empty")
	if err != nil {
		return false, err
	}
	// Not named cib*: Pacemaker must never take a half-made file for a backup.
	tmp, err := os.CreateTemp(dir, ".tnf-seed-")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(empty)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return false, err
	}
	for _, o := range options {
		if _, err := t.onFile(tmp.Name()).Run(ctx, "crm_attribute", "--type", "crm_config", "--name", o[0], "--update", o[1]); err != nil {
			return false, err
		}
	}
	if err := os.Chown(tmp.Name(), int(owner.Uid), int(owner.Gid)); err != nil {
		return false, err
	}
	return true, os.Rename(tmp.Name(), filepath.Join(dir, "cib.xml"))
}
