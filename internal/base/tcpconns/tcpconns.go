// Package tcpconns ends other processes' TCP connections to an address: the kernel's socket
// destroy (SOCK_DESTROY, CONFIG_INET_DIAG_DESTROY), through iproute2's ss, which every node has.
// A client whose connection ends so gets an error at once and chooses another server; one whose
// server lost its power (nothing answers, not even a reset) would otherwise wait for its own
// timeouts.
package tcpconns

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// filter is ss's filter of the established connections to ip:port.
func filter(ip netip.Addr, port int) []string {
	dst := ip.String()
	if ip.Is6() {
		dst = "[" + dst + "]"
	}
	return []string{"state", "established", "dst", dst, "dport", "=", ":" + strconv.Itoa(port)}
}

// Close ends every established TCP connection of this network namespace to ip:port and says
// how many it ended. Connections the kernel would not end (one built without socket destroy)
// are an error that says so.
func Close(ctx context.Context, ip string, port int) (int, error) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return 0, err
	}
	out, err := command.Cmd{}.Run(ctx, "ss", append([]string{"-K", "-t", "-n", "-H"}, filter(addr.Unmap(), port)...)...)
	if err != nil {
		return 0, err
	}
	asked := connections(out)
	left, err := command.Cmd{}.Run(ctx, "ss", append([]string{"-t", "-n", "-H"}, filter(addr.Unmap(), port)...)...)
	if err != nil {
		return 0, err
	}
	// A connection opened since (a client that reconnected at once) is no failure to end one.
	still := 0
	for c := range connections(left) {
		if asked[c] {
			still++
		}
	}
	if still > 0 {
		return len(asked) - still, fmt.Errorf("%d of %d connections to %s are still open: the kernel cannot end them (CONFIG_INET_DIAG_DESTROY)",
			still, len(asked), netip.AddrPortFrom(addr.Unmap(), uint16(port)))
	}
	return len(asked), nil
}

// connections are the sockets ss listed, one a line, each by its two addresses.
func connections(out string) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 4 {
			set[f[len(f)-2]+" "+f[len(f)-1]] = true
		}
	}
	return set
}
