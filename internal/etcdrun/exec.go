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

	"github.com/tnf-layer/tnf-layer/internal/fsutil"
)

func sortStrings(s []string) { sort.Strings(s) }

// Exec runs the etcd binary as a process of its own session. The PID and the process start time
// are kept in PIDFile, so a recycled PID is never mistaken for etcd, and nothing is ever looked
// up by process name.
type Exec struct {
	Binary  string
	PIDFile string
	LogFile string
}

// Start launches etcd detached from the agent (its own session; it outlives the action).
func (e Exec) Start(_ context.Context, s Spec) error {
	if err := os.MkdirAll(filepath.Dir(e.PIDFile), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(e.LogFile), 0o750); err != nil {
		return err
	}
	log, err := os.OpenFile(e.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(e.Binary, s.Args()...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", e.Binary, err)
	}
	pid := cmd.Process.Pid
	start, err := startTime(pid)
	if err != nil {
		return err
	}
	// Not waited for: etcd outlives the action and is reparented; its state lives in PIDFile.
	if err := cmd.Process.Release(); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(e.PIDFile, []byte(fmt.Sprintf("%d %d\n", pid, start)), 0o600)
}

// pid returns the recorded PID if that process is still the one we started.
func (e Exec) pid() (int, bool, error) {
	data, err := os.ReadFile(e.PIDFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &start); err != nil {
		return 0, false, fmt.Errorf("%s: %w", e.PIDFile, err)
	}
	now, err := startTime(pid)
	if err != nil || now != start {
		return pid, false, nil
	}
	return pid, !zombie(pid), nil
}

func (e Exec) Running(context.Context) (bool, error) {
	_, ok, err := e.pid()
	return ok, err
}

// Stop sends SIGTERM (and SIGCONT, so a stopped process can act on it), and SIGKILL after grace.
func (e Exec) Stop(ctx context.Context, grace time.Duration) error {
	pid, ok, err := e.pid()
	if err != nil {
		return err
	}
	if ok {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		_ = syscall.Kill(pid, syscall.SIGCONT)
		if !waitGone(pid, GraceWithin(ctx, grace, time.Second)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !waitGone(pid, 5*time.Second) {
				return fmt.Errorf("etcd (pid %d) survived SIGKILL", pid)
			}
		}
	}
	if err := os.Remove(e.PIDFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// waitGone polls until pid has exited (or is a zombie) or d has passed.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := startTime(pid); err != nil || zombie(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// statFields returns /proc/<pid>/stat fields after the command name.
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
