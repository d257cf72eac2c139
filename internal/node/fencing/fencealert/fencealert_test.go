package fencealert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// node is a socket path of this test's own, so parallel runs never meet. Send hands alerts only
// to a socket root serves, so the tests that listen need root, as the watcher has.
func node(t *testing.T) string {
	if os.Geteuid() != 0 {
		t.Skip("the watcher's socket must be root's")
	}
	return filepath.Join(t.TempDir(), "fencing", "alert.sock")
}

func self() map[uint32]bool { return map[uint32]bool{uint32(os.Getuid()): true} }

// serve runs Serve on node's socket until the test ends; it may be called from any goroutine.
func serve(t *testing.T, name string, fenced func(string) error) {
	ln, err := Listen(name)
	if err != nil {
		t.Error(err)
		return
	}
	t.Cleanup(func() { ln.Close() })
	go func() { _ = Serve(ln, self(), fenced) }()
}

// sendAndWant sends target's fencing to name's watcher and wants it handled, as handled says.
func sendAndWant(t *testing.T, name, target string, handled <-chan string) {
	t.Helper()
	if err := Send(context.Background(), name, target); err != nil {
		t.Fatal(err)
	}
	if got := <-handled; got != target {
		t.Fatalf("handled %q, want %s", got, target)
	}
}

// The watcher is down while the agent restarts etcd: a message sent meanwhile reaches the
// watcher that comes up after it.
func TestSendWaitsForTheWatcher(t *testing.T) {
	name := node(t)
	got := make(chan string, 1)
	time.AfterFunc(3*retryInterval, func() {
		serve(t, name, func(target string) error { got <- target; return nil })
	})
	sendAndWant(t, name, "node2", got)
}

// A watcher stopped between reading the message and handling it gives no reply: the message is
// sent again, to the next watcher.
func TestSendAgainWithoutAReply(t *testing.T) {
	name := node(t)
	ln, err := Listen(name)
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			conn.Close() // stopped before its reply
		}
		ln.Close()
		serve(t, name, func(target string) error { handled <- target; return nil })
	}()
	sendAndWant(t, name, "node1", handled)
}

// A watcher that answers with an error has read the message and will not handle it: Send says
// so, without trying again.
func TestSendRefused(t *testing.T) {
	name := node(t)
	var calls atomic.Int32
	serve(t, name, func(string) error { calls.Add(1); return errors.New("starting peer-fenced: no such file") })
	err := Send(context.Background(), name, "node2")
	if err == nil || !strings.Contains(err.Error(), "starting peer-fenced: no such file") {
		t.Fatalf("err = %v, want the watcher's reply", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("handled %d times: a refusal was sent again", n)
	}
}

// Nobody listening for the whole bound: an error that says so.
func TestSendNobodyListens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*retryInterval)
	defer cancel()
	err := Send(ctx, node(t), "node2")
	if err == nil || !strings.Contains(err.Error(), "does not listen") {
		t.Fatalf("err = %v, want one saying the watcher does not listen", err)
	}
}

// Others' messages are refused by uid, malformed ones by content; neither reaches fenced.
func TestServeRefuses(t *testing.T) {
	name := node(t)
	ln, err := Listen(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		_ = Serve(ln, map[uint32]bool{}, func(string) error { t.Error("a stranger's message was handled"); return nil })
	}()
	err = Send(context.Background(), name, "node2")
	if err == nil || !strings.Contains(err.Error(), "may not send fencing events") {
		t.Fatalf("err = %v, want the uid refused", err)
	}

	other := node(t)
	serve(t, other, func(string) error { t.Error("a malformed message was handled"); return nil })
	conn, err := net.Dial("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "fenced two words\n")
	reply := make([]byte, 64)
	n, _ := conn.Read(reply)
	if !strings.Contains(string(reply[:n]), "not a fencing message") {
		t.Fatalf("reply %q, want the message refused", reply[:n])
	}
}

// A folder others may write is refused: a socket bound there first would take the alerts.
func TestListenRefusesAFolderOthersWrite(t *testing.T) {
	path := node(t)
	if err := os.Mkdir(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if ln, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a folder only this user") {
		if ln != nil {
			ln.Close()
		}
		t.Fatalf("err = %v, want the folder refused", err)
	}
}

// A socket served by anyone but root is not the etcd agent's: the sender refuses to hand it
// the alert, without trying again.
func TestSendRefusesAWatcherNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a listener as another user")
	}
	dir, err := os.MkdirTemp("", "fencealert-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "alert.sock")
	// Python's socket module (Debian's, which fence-agents needs): a listener running as nobody.
	listener := exec.Command("/usr/bin/python3", "-c", `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
print("ready", flush=True)
sys.stdin.read()`, path)
	listener.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, err := listener.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := listener.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = listener.Process.Kill()
		_ = listener.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the listener did not start: %q, %v", line, err)
	}
	err = Send(context.Background(), path, "node2")
	if err == nil || !strings.Contains(err.Error(), "not root") {
		t.Fatalf("err = %v, want a watcher that is not root refused", err)
	}
}
