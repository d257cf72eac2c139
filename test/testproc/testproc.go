// Package testproc starts the processes a test runs beside its own (etcd, kube-apiserver, a
// node's daemon), each stopped by its PID when the test ends.
package testproc

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Start starts binary with args, its output in logFile. stop sends it SIGTERM, then SIGKILL if
// it is still there 10 s later, and returns once it has exited; the test's end calls it too.
func Start(t testing.TB, logFile, binary string, args ...string) (stop func()) {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM) // it may have exited: Wait says how
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			log.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}
