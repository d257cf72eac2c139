package fencealert

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// node is a socket name of this test's own, so parallel runs never meet.
func node(t *testing.T) string {
	return fmt.Sprintf("test-%d-%s", os.Getpid(), t.Name())
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

	other := node(t) + "-malformed"
	serve(t, other, func(string) error { t.Error("a malformed message was handled"); return nil })
	conn, err := net.Dial("unix", Socket(other))
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
