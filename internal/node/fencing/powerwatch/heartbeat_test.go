package powerwatch

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/testutil/syncbuf"
)

// heartbeats binds the two nodes' heartbeats on loopback addresses of their own, one port.
func heartbeats(t *testing.T) (node1, node2 *Heartbeat, conn1, conn2 *net.UDPConn) {
	t.Helper()
	a1, a2 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	node1 = &Heartbeat{Self: "node1", Peer: "node2", Local: netip.AddrPortFrom(a1, 0)}
	conn1, err := node1.Listen()
	if err != nil {
		t.Fatal(err)
	}
	port := conn1.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	node1.Local, node1.PeerAddress = netip.AddrPortFrom(a1, port), netip.AddrPortFrom(a2, port)
	node2 = &Heartbeat{Self: "node2", Peer: "node1", Local: node1.PeerAddress, PeerAddress: node1.Local}
	if conn2, err = node2.Listen(); err != nil {
		conn1.Close()
		t.Fatal(err)
	}
	return node1, node2, conn1, conn2
}

// TestHeartbeat: each node hears the other's heartbeat; a node whose heartbeat stops is no
// longer heard once HeartbeatQuiet has passed.
func TestHeartbeat(t *testing.T) {
	node1, node2, conn1, conn2 := heartbeats(t)
	if node1.Heard() || node2.Heard() {
		t.Fatal("heard before any heartbeat")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx2, stop2 := context.WithCancel(ctx)
	done1, done2 := make(chan struct{}), make(chan struct{})
	go func() { node1.Run(ctx, conn1); close(done1) }()
	go func() { node2.Run(ctx2, conn2); close(done2) }()
	defer func() { cancel(); <-done1; <-done2 }()
	heard := func(h *Heartbeat, want bool) error {
		return poll.Every(ctx, 20*time.Millisecond, func(context.Context) (bool, error) { return h.Heard() == want, nil })
	}
	if err := heard(node1, true); err != nil {
		t.Fatal("node1 never heard node2:", err)
	}
	if err := heard(node2, true); err != nil {
		t.Fatal("node2 never heard node1:", err)
	}
	stop2()
	<-done2
	if err := heard(node1, false); err != nil {
		t.Fatal("node1 still hears node2 after its heartbeat stopped:", err)
	}
}

// TestHeartbeatIsThePeers: only the peer's address naming the peer is its heartbeat.
func TestHeartbeatIsThePeers(t *testing.T) {
	h := Heartbeat{Peer: "node2", PeerAddress: netip.MustParseAddrPort("192.0.2.2:9666")}
	for _, tc := range []struct {
		name, from, words string
		want              bool
	}{
		{"the peer's", "192.0.2.2:9666", heartbeatMagic + "node2", true},
		{"from another port of the peer's address", "192.0.2.2:40000", heartbeatMagic + "node2", true},
		{"as an IPv4-mapped IPv6 address", "[::ffff:192.0.2.2]:9666", heartbeatMagic + "node2", true},
		{"from another address", "192.0.2.3:9666", heartbeatMagic + "node2", false},
		{"naming another node", "192.0.2.2:9666", heartbeatMagic + "node1", false},
		{"another version", "192.0.2.2:9666", "tnf-power-watch heartbeat 2 node2", false},
		{"empty", "192.0.2.2:9666", "", false},
	} {
		if got := h.isPeers(netip.MustParseAddrPort(tc.from), []byte(tc.words)); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestWatcherLooksRarelyWhileHeard: while the peer's heartbeat is heard, the links are looked
// at only every Recheck; without it, every Interval.
func TestWatcherLooksRarelyWhileHeard(t *testing.T) {
	var looks atomic.Int32
	var heard atomic.Bool
	heard.Store(true)
	w := Watcher{Node: "node2", Dir: t.TempDir(), Interval: 10 * time.Millisecond, Recheck: time.Hour,
		Credential: func() (bmc.Credential, error) { return credential(t, ""), nil },
		Down:       func(context.Context) (bool, error) { looks.Add(1); return false, nil },
		PeerHeard:  heard.Load, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stopped := make(chan error)
	go func() { stopped <- w.Run(ctx) }()
	looked := func(n int32) error {
		return poll.Every(ctx, 10*time.Millisecond, func(context.Context) (bool, error) { return looks.Load() >= n, nil })
	}
	if err := looked(1); err != nil {
		t.Fatal("the links were never looked at:", err)
	}
	time.Sleep(300 * time.Millisecond) // thirty intervals
	if n := looks.Load(); n != 1 {
		t.Errorf("with the peer heard, the links were looked at %d times before Recheck, want once", n)
	}
	heard.Store(false)
	if err := looked(5); err != nil {
		t.Error("without the heartbeat the links are not looked at every interval:", err)
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Error(err)
	}
}

// TestHeartbeatBindsLater: a heartbeat whose address cannot be bound yet (here its port is
// taken; at boot the address may not be the host's yet) says so once, binds once it can, and
// is heard from then on.
func TestHeartbeatBindsLater(t *testing.T) {
	node1, node2, conn1, conn2 := heartbeats(t)
	conn1.Close()
	squatter, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(node1.Local))
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	node1.Rebind = 20 * time.Millisecond
	var logged syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done1, done2 := make(chan struct{}), make(chan struct{})
	go func() { node1.Serve(ctx, slog.New(slog.NewTextHandler(&logged, nil))); close(done1) }()
	go func() { node2.Run(ctx, conn2); close(done2) }()
	defer func() { cancel(); <-done1; <-done2 }()
	says := func(s string) error {
		return poll.Every(ctx, 10*time.Millisecond, func(context.Context) (bool, error) { return strings.Contains(logged.String(), s), nil })
	}
	if err := says("no heartbeat with the peer's watch"); err != nil {
		t.Fatal("a failed bind was not logged:", err)
	}
	squatter.Close()
	if err := says("the heartbeat with the peer's watch is bound"); err != nil {
		t.Fatal("never bound once the port was free:", err)
	}
	for _, h := range []*Heartbeat{node1, node2} {
		if err := poll.Every(ctx, 20*time.Millisecond, func(context.Context) (bool, error) { return h.Heard(), nil }); err != nil {
			t.Fatalf("%s never heard %s: %v", h.Self, h.Peer, err)
		}
	}
	if n := strings.Count(logged.String(), "no heartbeat"); n != 1 {
		t.Errorf("the failed bind was logged %d times, want once", n)
	}
}
