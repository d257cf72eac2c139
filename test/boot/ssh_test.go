//go:build boot

package boot_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// commandLimit bounds one command in a guest (pcs status alone takes ≈ 11 s under TCG).
const commandLimit = 2 * time.Minute

// sshConn is the test's way into a guest: root over SSH on the loopback port forward. It
// connects on first use and again after the machine lost its power.
type sshConn struct {
	addr string
	mu   sync.Mutex
	c    *ssh.Client
}

func (s *sshConn) client() (*ssh.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		return s.c, nil
	}
	// QEMU's port forward accepts at once even while the guest boots: the SSH handshake, not
	// the TCP connection, is what waits, so the deadline covers both.
	conn, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	cc, chans, reqs, err := ssh.NewClientConn(conn, s.addr, &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(image.signer)},
		// Each guest makes its host key at first boot; the forward is on loopback.
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	c := ssh.NewClient(cc, chans, reqs)
	s.c = c
	return c, nil
}

// close drops the connection; the next use connects again.
func (s *sshConn) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

// run runs a shell command and returns its standard output; stderr goes into the error.
func (s *sshConn) run(cmd string) (string, error) { return s.runInput(cmd, nil) }

// runInput is run with the command's standard input read from stdin (none when nil).
func (s *sshConn) runInput(cmd string, stdin io.Reader) (string, error) {
	c, err := s.client()
	if err != nil {
		return "", err
	}
	sess, err := c.NewSession()
	if err != nil {
		s.close()
		return "", err
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, &out, &errOut
	// A guest that loses its power mid-command may never answer: bound every command.
	timer := time.AfterFunc(commandLimit, func() { sess.Close() })
	defer timer.Stop()
	if err := sess.Run(cmd); err != nil {
		// Anything but the command's own exit status means the connection may be gone (the
		// guest lost its power or rebooted): the next command connects afresh.
		var exit *ssh.ExitError
		if !errors.As(err, &exit) {
			s.close()
		}
		return out.String(), fmt.Errorf("%s: %v: %s", cmd, err, errOut.String())
	}
	return out.String(), nil
}

// dial opens a TCP connection from inside the guest (etcd's client port).
func (s *sshConn) dial(addr string) (net.Conn, error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	conn, err := c.Dial("tcp", addr)
	// A refused channel (nothing listens there yet) says nothing about the connection, which
	// other commands share; only a failure of the connection itself drops it.
	var refused *ssh.OpenChannelError
	if err != nil && !errors.As(err, &refused) {
		s.close()
	}
	return conn, err
}
