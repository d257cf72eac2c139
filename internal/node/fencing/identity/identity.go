// Package identity tells whether a BMC is the one of the machine a node runs on: the Redfish
// ComputerSystem's UUID against the node's SMBIOS UUID, or the system's network interfaces'
// MAC addresses against the node's. Swapped BMC entries (node1's BMC listed for node2) would
// make the first fencing power off the survivor; each node publishes its identity (Attr) and
// the race winner's setup checks both BMCs against them before anything is configured.
package identity

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// Attr is the node attribute in which each node publishes its identity (Publish).
const Attr = "tnf-machine-identity"

// ProductUUIDFile is where Linux shows the machine's SMBIOS UUID.
const ProductUUIDFile = "/sys/class/dmi/id/product_uuid"

// Identity is what names a machine: its UUID (lowercase, "" when unknown) and its MAC addresses
// (lowercase, sorted).
type Identity struct {
	UUID string
	MACs []string
}

// New normalises what a machine or a BMC says: a UUID that is all zeros or all Fs (firmware
// that set none) is unknown, and MAC addresses that are not Ethernet's or are zero are dropped.
func New(uuid string, macs []string) Identity {
	id := Identity{UUID: strings.ToLower(strings.TrimSpace(uuid))}
	if strings.Trim(id.UUID, "0-") == "" || strings.Trim(id.UUID, "f-") == "" {
		id.UUID = ""
	}
	for _, m := range macs {
		hw, err := net.ParseMAC(strings.TrimSpace(m))
		if err != nil || len(hw) != 6 || slices.Equal(hw, make(net.HardwareAddr, 6)) {
			continue
		}
		if s := hw.String(); !slices.Contains(id.MACs, s) {
			id.MACs = append(id.MACs, s)
		}
	}
	slices.Sort(id.MACs)
	return id
}

// Local is this machine's identity: its SMBIOS UUID, when the firmware gives one, and the MAC
// addresses of its interfaces.
func Local() (Identity, error) {
	uuid, err := os.ReadFile(ProductUUIDFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Identity{}, fmt.Errorf("%s: %w", ProductUUIDFile, err)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return Identity{}, fmt.Errorf("this machine's interfaces: %w", err)
	}
	var macs []string
	for _, i := range ifaces {
		if i.Flags&net.FlagLoopback == 0 {
			macs = append(macs, i.HardwareAddr.String())
		}
	}
	return New(string(uuid), macs), nil
}

// String is the identity as Attr holds it: "uuid=<uuid> macs=<mac>,<mac>".
func (id Identity) String() string {
	return "uuid=" + id.UUID + " macs=" + strings.Join(id.MACs, ",")
}

// Parse reads Attr's value.
func Parse(s string) (Identity, error) {
	uuidPart, macPart, ok := strings.Cut(strings.TrimSpace(s), " ")
	uuid, ok1 := strings.CutPrefix(uuidPart, "uuid=")
	macs, ok2 := strings.CutPrefix(macPart, "macs=")
	if !ok || !ok1 || !ok2 {
		return Identity{}, fmt.Errorf("node attribute %s: %q is not \"uuid=<uuid> macs=<mac>,...\"", Attr, s)
	}
	var list []string
	if macs != "" {
		list = strings.Split(macs, ",")
	}
	return New(uuid, list), nil
}

// lifetimes are where Publish writes and Published reads, in this order. A node that boots
// alone writes into its own CIB, and when the peer joins one of the two CIBs replaces the other,
// its nodes section with it: the attribute daemon writes its (reboot lifetime) values again after
// such a replacement, so a wait always finds them. The permanent copy serves later boots.
var lifetimes = []attrs.Lifetime{attrs.Reboot, attrs.Forever}

// Publish publishes node's identity (Attr).
func Publish(ctx context.Context, store attrs.Store, node string, id Identity) error {
	for _, lt := range lifetimes {
		if err := store.Set(ctx, node, Attr, id.String(), lt); err != nil {
			return err
		}
	}
	return nil
}

// Published reads the identities nodes published: this boot's, else the permanent copy. ok is
// false when one has published none yet, or when it cannot be read now (the CIB may not answer
// while Pacemaker starts: callers wait, or check nothing); a value that is no identity is an
// error.
func Published(ctx context.Context, store attrs.Store, nodes []string) (machines map[string]Identity, ok bool, err error) {
	machines = map[string]Identity{}
	for _, n := range nodes {
		v, set := "", false
		for _, lt := range lifetimes {
			if got, found, err := store.Get(ctx, n, Attr, lt); err == nil && found {
				v, set = got, true
				break
			}
		}
		if !set {
			return nil, false, nil
		}
		if machines[n], err = Parse(v); err != nil {
			return nil, false, fmt.Errorf("%s: %w", n, err)
		}
	}
	return machines, true, nil
}

// Verdict is how a BMC's system compares with a machine.
type Verdict int

const (
	// Unknown: nothing to compare (no UUID on one side and no MAC on one side).
	Unknown Verdict = iota
	// Same: the UUIDs are equal, or a MAC address is on both.
	Same
	// Different: there was something to compare, and nothing matched.
	Different
)

// Compare tells whether the BMC's system (sys) is machine m. Some firmware gives the SMBIOS
// UUID's first three fields in the other byte order than Linux shows them: that form matches too.
func Compare(sys, m Identity) Verdict {
	comparable := false
	if sys.UUID != "" && m.UUID != "" {
		comparable = true
		if sys.UUID == m.UUID || sys.UUID == swapped(m.UUID) {
			return Same
		}
	}
	if len(sys.MACs) > 0 && len(m.MACs) > 0 {
		comparable = true
		for _, mac := range sys.MACs {
			if slices.Contains(m.MACs, mac) {
				return Same
			}
		}
	}
	if comparable {
		return Different
	}
	return Unknown
}

// swapped is a UUID with its first three fields' bytes reversed (the mixed-endian form of the
// SMBIOS table).
func swapped(u string) string {
	parts := strings.Split(u, "-")
	if len(parts) != 5 {
		return u
	}
	for i := 0; i < 3; i++ {
		p := parts[i]
		var b strings.Builder
		for j := len(p) - 2; j >= 0; j -= 2 {
			b.WriteString(p[j : j+2])
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, "-")
}

// Verify says whether sys, reached through target's BMC entry, is target's machine, given the
// published identities of the cluster's nodes. An error names what is wrong: the entry reaches
// another node's machine (swapped entries), or a machine that is none of them, or nothing can
// be compared (fail closed: an unchecked entry may power off the survivor).
func Verify(target string, sys Identity, machines map[string]Identity) error {
	if _, ok := machines[target]; !ok {
		return fmt.Errorf("%s has published no identity (node attribute %s): its BMC cannot be checked", target, Attr)
	}
	machines = distinct(machines)
	own := machines[target]
	verdict := Compare(sys, own)
	for name, m := range machines {
		if name == target || Compare(sys, m) != Same {
			continue
		}
		if verdict == Same {
			return fmt.Errorf("%s's BMC system (%s) matches both %s's machine and %s's: it tells neither apart", target, sys, target, name)
		}
		return fmt.Errorf("%s's BMC entry reaches %s's machine (%s): the entries are swapped; fencing %s would power off %s",
			target, name, sys, target, name)
	}
	switch verdict {
	case Same:
		return nil
	case Unknown:
		return fmt.Errorf("%w between %s's BMC system (%s) and %s's machine (%s): neither a UUID nor a MAC address on both",
			ErrNothingToCompare, target, sys, target, own)
	}
	return fmt.Errorf("%s's BMC entry reaches a machine that is not %s's (BMC: %s; %s: %s)", target, target, sys, target, own)
}

// ErrNothingToCompare is Verify's error when neither a UUID nor a MAC address is known on both
// sides: the entry may be right, but nothing shows it.
var ErrNothingToCompare = errors.New("nothing to compare")

// distinct drops what does not tell the machines apart: a UUID or a MAC address two of them
// share (firmware that sets a placeholder UUID, cloned machines).
func distinct(machines map[string]Identity) map[string]Identity {
	uuids, macs := map[string]int{}, map[string]int{}
	for _, m := range machines {
		if m.UUID != "" {
			uuids[m.UUID]++
		}
		for _, mac := range m.MACs {
			macs[mac]++
		}
	}
	out := map[string]Identity{}
	for name, m := range machines {
		d := Identity{UUID: m.UUID}
		if uuids[m.UUID] > 1 {
			d.UUID = ""
		}
		for _, mac := range m.MACs {
			if macs[mac] == 1 {
				d.MACs = append(d.MACs, mac)
			}
		}
		out[name] = d
	}
	return out
}
