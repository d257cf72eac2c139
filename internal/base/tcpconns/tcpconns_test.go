package tcpconns

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestClose: the connections to one address end, and their client learns at once; a
// connection to another port of that address stays.
func TestClose(t *testing.T) {
	for _, host := range []string{"127.0.0.71", "::1"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []net.Listener{ln, other} {
			go func() { // the server side stays open until the listener closes
				var accepted []net.Conn
				defer func() {
					for _, c := range accepted {
						c.Close()
					}
				}()
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					accepted = append(accepted, c)
				}
			}()
		}
		var clients []net.Conn
		for range 3 {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		kept, err := net.Dial("tcp", other.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		n, err := Close(context.Background(), host, ln.Addr().(*net.TCPAddr).Port)
		if err != nil || n != 3 {
			t.Fatalf("%s: closed %d: %v", host, n, err)
		}
		for _, c := range clients {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNABORTED) {
				t.Errorf("%s: a closed connection reads %v", host, err)
			}
			c.Close()
		}
		_ = kept.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := kept.Read(make([]byte, 1)); !errors.Is(err, syscall.ETIMEDOUT) && !isTimeout(err) {
			t.Errorf("%s: the other port's connection reads %v", host, err)
		}
		kept.Close()
		ln.Close()
		other.Close()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
