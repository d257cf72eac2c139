package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// qemuBackend owns one QEMU process and drives it through QMP. The machine is "Off" only when
// the process is gone or QEMU reports the shutdown state.
type qemuBackend struct {
	c    QEMUPower
	sock string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	mon  *qmp.SocketMonitor
}

func newQEMU(c QEMUPower, dir string) (*qemuBackend, error) {
	if c.GracefulTimeout.Duration == 0 {
		c.GracefulTimeout.Duration = 30 * time.Second
	}
	q := &qemuBackend{c: c, sock: filepath.Join(dir, "qmp.sock")}
	if c.Initial == "On" {
		if err := q.On(context.Background()); err != nil {
			return nil, err
		}
	}
	return q, nil
}

func (q *qemuBackend) alive() bool {
	if q.done == nil {
		return false
	}
	select {
	case <-q.done:
		return false
	default:
		return true
	}
}

func (q *qemuBackend) On(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.alive() {
		return nil
	}
	os.Remove(q.sock)
	args := append(append([]string{}, q.c.Command[1:]...), "-qmp", "unix:"+q.sock+",server=on,wait=off")
	cmd := exec.Command(q.c.Command[0], args...)
	if q.c.Console != "" {
		f, err := os.OpenFile(q.c.Console, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting QEMU: %w", err)
	}
	done := make(chan struct{})
	if q.c.PIDFile != "" {
		if err := fsutil.WriteFileAtomic(q.c.PIDFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return err
		}
	}
	go func() {
		cmd.Wait()
		if q.c.PIDFile != "" {
			os.Remove(q.c.PIDFile)
		}
		close(done)
	}()
	q.cmd, q.done = cmd, done
	// Bounded wait for the QMP socket.
	for i := 0; ; i++ {
		mon, err := qmp.NewSocketMonitor("unix", q.sock, 2*time.Second)
		if err == nil {
			if err = mon.Connect(); err == nil {
				q.mon = mon
				return nil
			}
		}
		if i == 100 || !q.alive() {
			q.kill()
			return fmt.Errorf("QEMU's QMP socket did not come up: %v", err)
		}
		select {
		case <-ctx.Done():
			q.kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run sends one QMP command and returns its "return" value.
func (q *qemuBackend) run(cmd string) (json.RawMessage, error) {
	if q.mon == nil || !q.alive() {
		return nil, fmt.Errorf("QEMU is not running")
	}
	out, err := q.mon.Run([]byte(`{"execute":"` + cmd + `"}`))
	if err != nil {
		return nil, fmt.Errorf("QMP %s: %w", cmd, err)
	}
	var r struct {
		Return json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("QMP %s: %w", cmd, err)
	}
	return r.Return, nil
}

func (q *qemuBackend) State(context.Context) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.alive() {
		return "Off", nil
	}
	ret, err := q.run("query-status")
	if err != nil {
		if !q.alive() {
			return "Off", nil
		}
		return "", err
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(ret, &st); err != nil {
		return "", err
	}
	if st.Status == "shutdown" {
		return "Off", nil
	}
	return "On", nil
}

// kill ends the process by its PID and waits for it; q.mu is held.
func (q *qemuBackend) kill() {
	if !q.alive() {
		return
	}
	_ = q.cmd.Process.Signal(syscall.SIGKILL)
	<-q.done
}

// ForceOff is QMP quit (the power cut); SIGKILL if QEMU does not go within 10 s.
func (q *qemuBackend) ForceOff(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.alive() {
		return nil
	}
	_, _ = q.run("quit")
	select {
	case <-q.done:
	case <-time.After(10 * time.Second):
		q.kill()
	}
	if q.mon != nil {
		q.mon.Disconnect()
		q.mon = nil
	}
	return nil
}

// GracefulShutdown presses the ACPI power button and cuts the power if the guest has not
// powered off after the graceful timeout.
func (q *qemuBackend) GracefulShutdown(ctx context.Context) error {
	q.mu.Lock()
	if !q.alive() {
		q.mu.Unlock()
		return nil
	}
	_, err := q.run("system_powerdown")
	done := q.done
	q.mu.Unlock()
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-done:
		case <-time.After(q.c.GracefulTimeout.Duration):
			_ = q.ForceOff(context.Background())
		}
	}()
	return nil
}

func (q *qemuBackend) Restart(ctx context.Context) error {
	q.mu.Lock()
	if !q.alive() {
		q.mu.Unlock()
		return q.On(ctx)
	}
	defer q.mu.Unlock()
	_, err := q.run("system_reset")
	return err
}

func (q *qemuBackend) Nmi(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, err := q.run("inject-nmi")
	return err
}

func (q *qemuBackend) Close() error { return q.ForceOff(context.Background()) }

// PID of the running QEMU, 0 when off (tests).
func (q *qemuBackend) PID() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.alive() {
		return 0
	}
	return q.cmd.Process.Pid
}
