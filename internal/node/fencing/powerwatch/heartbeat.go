package powerwatch

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// A heartbeat between the two nodes' watches spares the watch Corosync's links while the peer
// is plainly there. Each look at the links is a corosync-cfgtool run and an IPC connection to
// Corosync, which twice a second a slow node feels (the boot tests' emulated guests). While the
// peer's heartbeat comes in, the watch looks only every Recheck; once it has been quiet for
// HeartbeatQuiet (a power cut silences it at once, knet drops the link a second or two later),
// the watch looks every Interval, as it did before. The heartbeat only decides how often to
// look: the trigger is still Corosync's links, and the proof the BMC's reads. A forged
// heartbeat delays the watch's reads by at most Recheck and a tick; level 1 then reads itself.
const (
	HeartbeatPort  = 9666
	HeartbeatEvery = 250 * time.Millisecond
	// HeartbeatQuiet is how long without a datagram from the peer counts as no heartbeat:
	// three missed, well within knet's own 1.5 s with the 3 s token.
	HeartbeatQuiet = 3 * HeartbeatEvery
	DefaultRecheck = 5 * time.Second
	// DefaultRebind is how long Serve waits to bind again after a failed bind.
	DefaultRebind = 5 * time.Second
)

// Heartbeat sends this node's datagram to the peer's watch every HeartbeatEvery, and notes
// when the peer's came in last.
type Heartbeat struct {
	Self, Peer         string // the nodes' names: each datagram carries its sender's
	Local, PeerAddress netip.AddrPort
	Rebind             time.Duration // 0: DefaultRebind
	heard              atomic.Int64  // BootClock at the peer's last datagram; 0: never
}

const heartbeatMagic = "tnf-power-watch heartbeat 1 "

// Listen binds the heartbeat's socket: an error (the address not this host's, the port taken)
// leaves the watch looking at the links every Interval.
func (h *Heartbeat) Listen() (*net.UDPConn, error) {
	return net.ListenUDP("udp", net.UDPAddrFromAddrPort(h.Local))
}

// Serve binds the heartbeat's socket and runs it until ctx ends. A bind that fails (at boot the
// address may not be this host's yet; the port may be taken) is tried again every Rebind, its
// failure logged once: meanwhile nothing is heard, and the watch looks at the links every
// Interval.
func (h *Heartbeat) Serve(ctx context.Context, log *slog.Logger) {
	rebind := h.Rebind
	if rebind == 0 {
		rebind = DefaultRebind
	}
	failed := false
	for {
		conn, err := h.Listen()
		if err == nil {
			if failed {
				log.Info("the heartbeat with the peer's watch is bound", "address", h.Local)
			}
			h.Run(ctx, conn)
			return
		}
		if !failed {
			log.Error("no heartbeat with the peer's watch: Corosync's links are looked at every interval until it binds",
				"address", h.Local, "err", err)
			failed = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(rebind):
		}
	}
}

// Run sends and receives on conn until ctx ends, and closes it.
func (h *Heartbeat) Run(ctx context.Context, conn *net.UDPConn) {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	go h.receive(conn)
	beat := []byte(heartbeatMagic + h.Self)
	tick := time.NewTicker(HeartbeatEvery)
	defer tick.Stop()
	for {
		// A send that fails (no route yet at boot) is tried again at the next beat.
		_, _ = conn.WriteToUDPAddrPort(beat, h.PeerAddress)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (h *Heartbeat) receive(conn *net.UDPConn) {
	buf := make([]byte, 512)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		switch {
		case errors.Is(err, net.ErrClosed):
			return
		case err != nil:
			// Not one that goes away by reading again at once.
			time.Sleep(HeartbeatEvery)
		case h.isPeers(from, buf[:n]):
			h.heard.Store(int64(BootClock()))
		}
	}
}

// isPeers says whether a datagram is the peer's heartbeat: from its address, naming it.
func (h *Heartbeat) isPeers(from netip.AddrPort, datagram []byte) bool {
	return from.Addr().Unmap() == h.PeerAddress.Addr().Unmap() && string(datagram) == heartbeatMagic+h.Peer
}

// Heard says whether the peer's heartbeat came in within the last HeartbeatQuiet.
func (h *Heartbeat) Heard() bool {
	last := h.heard.Load()
	return last != 0 && BootClock()-time.Duration(last) <= HeartbeatQuiet
}
