// Package fencealert carries a completed fencing from Pacemaker to the etcd agent. Pacemaker
// drops the survivor's post-stop notification when the fencing's result aborts the transition
// that carried it (a fenced node back in Corosync just before the result arrived, for one); the
// survivor then waited for its next monitor. Pacemaker's alert interface is not dropped: the
// controller of every node runs the alert agent (agents/tnf-fencing-alert, as the hacluster
// user) for every fencing result. The agent passes a successful fencing of another node to the
// etcd agent's watcher, which runs as root beside etcd and listens on an abstract Unix socket
// named after its node. The watcher verifies the fencing in Pacemaker's own history before
// anything is done, so a message proves nothing by itself.
package fencealert

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
)

// Event is one alert, from the variables Pacemaker sets (CRM_alert_*).
type Event struct {
	Kind   string // fencing, node, resource, attribute
	Target string // CRM_alert_node: the fenced node
	Task   string // the fencing action: reboot, off, on
	RC     string // 0 when the fencing succeeded
	Desc   string
}

// FromEnv reads the alert's variables.
func FromEnv(getenv func(string) string) Event {
	return Event{Kind: getenv("CRM_alert_kind"), Target: getenv("CRM_alert_node"), Task: getenv("CRM_alert_task"),
		RC: getenv("CRM_alert_rc"), Desc: getenv("CRM_alert_desc")}
}

// Relevant says whether the event is a successful fencing of a node other than self, the only
// kind the etcd agent acts on, and why not otherwise.
func Relevant(e Event, self string) (bool, string) {
	switch {
	case e.Kind != "fencing":
		return false, "not a fencing event: " + e.Kind
	case e.Task == "on":
		return false, "an unfencing"
	case e.RC != "0":
		return false, "the fencing failed (rc " + e.RC + ")"
	case e.Target == "":
		return false, "no target"
	case e.Target == self:
		return false, "this node is the target"
	}
	return true, e.Target + " fenced (" + e.Task + ")"
}

// Socket is the abstract socket the watcher of node's etcd agent listens on. Abstract sockets
// need no directory the hacluster user may enter, and belong to the network namespace.
func Socket(node string) string { return "@tnf-etcd-agent/" + node + "/fencing" }

// Send tells node's etcd agent that target was fenced; it returns once the watcher has handled
// it. The watcher is down while the agent restarts etcd (a post-stop notification that came
// first, say) and is back within a second: a refused connection, or one closed before the
// reply, is tried again every retryInterval until ctx or sendTimeout ends. A message handled
// twice is harmless (the agent acts once, under its lock).
func Send(ctx context.Context, node, target string) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	var last error
	err := poll.Every(ctx, retryInterval, func(ctx context.Context) (bool, error) {
		last = sendOnce(ctx, node, target)
		var final *refusedError
		if errors.As(last, &final) {
			return false, last
		}
		return last == nil, nil
	})
	if err != nil {
		return cmp.Or(last, err)
	}
	return nil
}

const (
	sendTimeout   = 5 * time.Second
	retryInterval = 100 * time.Millisecond
)

// refusedError is the watcher's answer that it will not handle the message: trying again
// cannot change it.
type refusedError struct{ reply string }

func (e *refusedError) Error() string { return "the etcd agent's watcher: " + e.reply }

func sendOnce(ctx context.Context, node, target string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", Socket(node))
	if err != nil {
		return fmt.Errorf("the etcd agent's watcher on %s does not listen (etcd not running there?): %w", node, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(conn, "fenced %s\n", target); err != nil {
		return err
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("no reply from the etcd agent's watcher: %w", err)
	}
	if r := strings.TrimSpace(reply); r != "ok" {
		return &refusedError{reply: r}
	}
	return nil
}

// Listen opens node's socket.
func Listen(node string) (net.Listener, error) { return net.Listen("unix", Socket(node)) }

// Allowed are the users whose messages are read: root, and the user Pacemaker runs alert agents
// as (hacluster).
func Allowed() map[uint32]bool {
	ok := map[uint32]bool{0: true}
	if u, err := user.Lookup("hacluster"); err == nil {
		if uid, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			ok[uint32(uid)] = true
		}
	}
	return ok
}

// Serve reads one message per connection until ln is closed, and calls fenced with the target
// of each one from an allowed user. The reply is "ok" once fenced has returned without error, so
// a watcher stopped before that leaves the sender without a reply, and it tries again.
// Malformed messages and others' connections get an error reply and nothing else.
func Serve(ln net.Listener, allowed map[uint32]bool, fenced func(target string) error) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		target, err := read(conn, allowed)
		if err == nil {
			err = fenced(target)
		}
		reply := "ok"
		if err != nil {
			reply = err.Error()
		}
		_, _ = fmt.Fprintln(conn, reply)
		conn.Close()
	}
}

func read(conn net.Conn, allowed map[uint32]bool) (string, error) {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return "", errors.New("not a Unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "", err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return "", err
	}
	if credErr != nil {
		return "", credErr
	}
	if !allowed[cred.Uid] {
		return "", fmt.Errorf("uid %d may not send fencing events", cred.Uid)
	}
	line, err := bufio.NewReader(io.LimitReader(conn, 512)).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the message: %w", err)
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "fenced ")
	if !ok || target == "" || strings.ContainsAny(target, " \t") {
		return "", errors.New("not a fencing message")
	}
	return target, nil
}
