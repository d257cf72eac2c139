// Package fencealert carries a completed fencing from Pacemaker to the etcd agent. Pacemaker
// drops the survivor's post-stop notification when the fencing's result aborts the transition
// that carried it (a fenced node back in Corosync just before the result arrived, for one); the
// survivor then waited for its next monitor. Pacemaker's alert interface is not dropped: the
// controller of every node runs the alert agent (agents/tnf-fencing-alert, as the hacluster
// user) for every fencing result. The agent passes a successful fencing of another node to the
// etcd agent's watcher, which runs as root beside etcd and listens on a Unix socket in a folder
// only root may write (DefaultSocket). The watcher verifies the fencing in Pacemaker's own
// history before anything is done, so a message proves nothing by itself; the sender checks the
// socket is root's, so no other process can take the alerts in its place.
package fencealert

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
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

// DefaultSocket is where the etcd agent's watcher listens (the agent's fencing_socket). Not an
// abstract socket: those belong to the network namespace, and any hostNetwork pod could bind
// the name first and swallow the alerts. A path in a folder only root may write cannot be taken.
const DefaultSocket = "/run/tnf-fencing/alert.sock"

// Send tells the etcd agent listening at socket that target was fenced; it returns once the watcher has handled
// it. The watcher is down while the agent restarts etcd (a post-stop notification that came
// first, say) and is back within a second: a refused connection, or one closed before the
// reply, is tried again every retryInterval until ctx or sendTimeout ends. A message handled
// twice is harmless (the agent acts once, under its lock).
func Send(ctx context.Context, socket, target string) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	var last error
	err := poll.Every(ctx, retryInterval, func(ctx context.Context) (bool, error) {
		last = sendOnce(ctx, socket, target)
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

func sendOnce(ctx context.Context, socket, target string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("the etcd agent's watcher does not listen at %s (etcd not running here?): %w", socket, err)
	}
	defer conn.Close()
	switch cred, err := peerCred(conn); {
	case err != nil:
		return err
	case cred.Uid != 0:
		return &refusedError{reply: fmt.Sprintf("%s is served by uid %d, not root: not the etcd agent's", socket, cred.Uid)}
	}
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

// Listen opens the socket at path. Its folder is created for root alone to write, and refused
// when someone else could (a socket another process bound there first, or replaced, would take
// the alerts); the socket itself may be connected to by anyone: Serve reads the sender's uid.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) || st.Mode&0o022 != 0 {
		return nil, fmt.Errorf("%s: not a folder only this user (uid %d) may write: refusing to listen for fencing alerts there", dir, os.Geteuid())
	}
	// The alert agent runs as hacluster: it must be able to reach the socket.
	if st.Mode&0o011 != 0o011 {
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
	}
	// A socket left by an earlier watcher (killed with etcd) holds the name.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// Go's listener removes the file when closed: a later watcher must not lose its socket to
	// an earlier one's close.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

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
	cred, err := peerCred(conn)
	if err != nil {
		return "", err
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

// peerCred is the credentials of the process at the other end of a Unix connection: for the
// sender, the one that listens; for the watcher, the one that connected.
func peerCred(conn net.Conn) (*unix.Ucred, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a Unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return nil, err
	}
	return cred, credErr
}
