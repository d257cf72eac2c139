package etcdrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/base/poll"
)

func sortStrings(s []string) { sort.Strings(s) }

// Process is a program run detached from the agent (its own session; it outlives the action).
// Its PID and start time are kept in PIDFile, so a recycled PID is never mistaken for it, and
// nothing is ever looked up by process name.
type Process struct {
	Binary  string
	PIDFile string
	LogFile string // stdout and stderr are appended to it
}

// Start launches the program with args and env (nil: this process's environment).
func (p Process) Start(args, env []string) error {
	if err := os.MkdirAll(filepath.Dir(p.PIDFile), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.LogFile), 0o750); err != nil {
		return err
	}
	log, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(p.Binary, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = log, log, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.Binary, err)
	}
	// Not waited for: it outlives the action and is reparented; its state lives in PIDFile.
	pid := cmd.Process.Pid
	if err := cmd.Process.Release(); err != nil {
		return err
	}
	return p.Record(pid)
}

// Record keeps pid, with its start time, as the started process (a process started by another,
// podman's container).
func (p Process) Record(pid int) error {
	start, err := startTime(pid)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(p.PIDFile, []byte(fmt.Sprintf("%d %d\n", pid, start)), 0o600)
}

// Forget deletes the record of the started process.
func (p Process) Forget() error { return fsutil.RemoveIfExists(p.PIDFile) }

// pid returns the recorded PID if that process is still the one started.
func (p Process) pid() (int, bool, error) {
	pid, _, alive, err := p.recorded()
	return pid, alive, err
}

// recorded reads the record: the PID, whether there is one, and whether that process is still
// the one started.
func (p Process) recorded() (pid int, recorded, alive bool, err error) {
	data, err := os.ReadFile(p.PIDFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, err
	}
	var start uint64
	if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &start); err != nil {
		return 0, false, false, fmt.Errorf("%s: %w", p.PIDFile, err)
	}
	now, err := startTime(pid)
	if err != nil || now != start {
		return pid, true, false, nil
	}
	return pid, true, !zombie(pid), nil
}

// Recorded says whether a started process is recorded and, if so, whether it is still alive.
func (p Process) Recorded() (recorded, alive bool, err error) {
	_, recorded, alive, err = p.recorded()
	return recorded, alive, err
}

// Running reports whether the started process is alive.
func (p Process) Running(context.Context) (bool, error) {
	_, ok, err := p.pid()
	return ok, err
}

// Stop sends SIGTERM (and SIGCONT, so a stopped process can act on it), and SIGKILL after grace.
func (p Process) Stop(ctx context.Context, grace time.Duration) error {
	pid, ok, err := p.pid()
	if err != nil {
		return err
	}
	if ok {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		_ = syscall.Kill(pid, syscall.SIGCONT)
		if !waitGone(pid, GraceWithin(ctx, grace, time.Second)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !waitGone(pid, 5*time.Second) {
				return fmt.Errorf("%s (pid %d) survived SIGKILL", p.Binary, pid)
			}
		}
	}
	return p.Forget()
}

// Wait blocks until the started process exits (at once if it is not running) or ctx ends. It
// watches a pidfd, which tells the exit of a process that is not our child without polling.
func (p Process) Wait(ctx context.Context) error {
	pid, ok, err := p.pid()
	if err != nil || !ok {
		return err
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	defer unix.Close(fd)
	// The PID may have been recycled between reading the file and opening the pidfd.
	if _, ok, err := p.pid(); err != nil || !ok {
		return err
	}
	for ctx.Err() == nil {
		// A bounded poll, so that ctx is looked at now and then.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return ctx.Err()
}

// Exec runs the etcd binary as a Process.
type Exec struct{ Process }

// NewExec is the exec runtime of the etcd binary.
func NewExec(binary, pidFile, logFile string) Exec {
	return Exec{Process{Binary: binary, PIDFile: pidFile, LogFile: logFile}}
}

// Start launches etcd with the spec's flags.
func (e Exec) Start(_ context.Context, s Spec) error { return e.Process.Start(s.Args(), nil) }

// ElectionTimeout reads the spec's flags and this process's environment, which etcd inherits.
func (e Exec) ElectionTimeout(s Spec) (time.Duration, error) {
	return ElectionTimeout(s.Args(), os.Environ())
}

// versionTimeout bounds `etcd --version`: it prints and exits at once.
const versionTimeout = 10 * time.Second

// Version runs the binary's --version.
func (e Exec) Version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.Binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", e.Binary, err)
	}
	return ParseVersion(string(out))
}

// VersionKey is the binary's path, size and modification time: a new etcd put there is read anew.
func (e Exec) VersionKey() (string, error) {
	fi, err := os.Stat(e.Binary)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exec %s %d %d", e.Binary, fi.Size(), fi.ModTime().UnixNano()), nil
}

// waitGone polls until pid has exited (or is a zombie) or d has passed.
func waitGone(pid int, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return poll.Every(ctx, 50*time.Millisecond, func(context.Context) (bool, error) {
		_, err := startTime(pid)
		return err != nil || zombie(pid), nil
	}) == nil
}

// statFields returns /proc/<pid>/stat fields after the command name. Parsed here rather than
// with prometheus/procfs: this package is linked into the fast monitor (ocf-etcd, through
// etcdnode), whose every start would pay procfs's init (0.23 ms; a run 3.8 ms → 4.25 ms).
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("pid %d: malformed stat", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// startTime is field 22 of /proc/<pid>/stat (clock ticks after boot).
func startTime(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("pid %d: short stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

func zombie(pid int) bool {
	f, err := statFields(pid)
	return err == nil && len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
