// Package powerwatch reads the peer's power through its BMC while the peer looks gone, so that
// the first fencing level's proof is there when Pacemaker asks for it. Corosync takes its token
// and consensus timeouts (6.6 s with the 3 s token) to drop a node that lost its power; its knet
// link to that node goes down within one to two seconds. From that trigger the watcher reads the
// peer's PowerState, each read one request, at most one read a gap, and records what it read in
// a file only root may write; fence_tnf_poweroff takes those reads as its own.
//
// The trigger proves nothing: a link down is a cut cable as well as a dead node. Only the reads
// do, and by the first level's own rule (two answered Off reads at least a gap apart, bmc.
// ProvenOff), with three more: every read was begun after the link was lost, none is older
// than MaxAge, and any read that answered anything but Off cancels every read before it.
package powerwatch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// Dir holds the records, one per BMC system: root's alone.
const Dir = "/run/tnf-power"

// MaxAge bounds how old a read may be to count: a node found Off must boot, start Corosync and
// join its peer before it could run anything that writes, which takes far longer.
const MaxAge = 10 * time.Second

// Read is one read of the PowerState. Its times are the boot clock's (BootClock): the record
// passes from the watcher to the fence agent, another process, and a step of the wall clock
// (NTP at boot, an administrator) must not make an old read look new, or two reads far apart.
type Read struct {
	Began time.Duration `json:"began"`
	At    time.Duration `json:"at"` // when the answer came
	State string        `json:"state,omitempty"`
	Err   string        `json:"err,omitempty"` // no answer, or a refusal
}

// Record is what the watcher read of one BMC system since the link to its node was lost.
type Record struct {
	Node     string        `json:"node"`
	System   string        `json:"system"` // the BMC system's URL
	Check    string        `json:"check"`  // how its certificate was checked (checkOf)
	LinkLost time.Duration `json:"linkLost"`
	Reads    []Read        `json:"reads"`
}

// BootClock is the time since the machine booted, suspended time included (CLOCK_BOOTTIME): the
// same in every process, and never stepped.
func BootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic(err) // a Linux kernel always has it
	}
	return time.Duration(ts.Nano())
}

// checkOf says how c's certificate is checked, so that a record read with one check is not
// taken by an agent configured with another.
func checkOf(c bmc.Credential) string {
	switch {
	case c.PinSHA256 != "":
		return "pin " + c.PinSHA256
	case c.VerifyCertificate:
		return "verified " + c.CAFile
	}
	return "unchecked"
}

func system(c bmc.Credential) string { return c.Address.Endpoint() + c.Address.SystemPath }

// Path is the record of c's BMC system.
func Path(dir string, c bmc.Credential) string {
	sum := sha256.Sum256([]byte(system(c)))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".json")
}

// Usable are the reads of r that count towards a proof at boot clock time boot for an agent
// that reaches the BMC with c: none when r was read with another system or check; else the
// answered reads begun after the link was lost and after the last read that answered anything
// but Off, none older than MaxAge, as bmc.PowerReads whose times are now less their age.
// Reads without an answer neither count nor cancel.
func Usable(r Record, c bmc.Credential, now time.Time, boot time.Duration) []bmc.PowerRead {
	if r.System != system(c) || r.Check != checkOf(c) {
		return nil
	}
	var out []bmc.PowerRead
	for _, rd := range r.Reads {
		age := boot - rd.At
		switch {
		case rd.Err != "" || rd.Began < r.LinkLost:
		case rd.State != "Off":
			out = nil
		case age <= MaxAge && age >= 0:
			out = append(out, bmc.PowerRead{State: rd.State, At: now.Add(-age)})
		}
	}
	return out
}

// Write replaces the record at path atomically, for root alone.
func Write(path string, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, data, 0o600)
}

// Load reads the record at path, only from a file and a folder of this user's that no one else
// may write: the reads in it fence a node. A missing record is no error (ok false).
func Load(path string) (r Record, ok bool, err error) {
	for _, p := range []string{filepath.Dir(path), path} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if os.IsNotExist(err) {
				return Record{}, false, nil
			}
			return Record{}, false, err
		}
		if st.Uid != uint32(os.Geteuid()) || st.Mode&0o022 != 0 {
			return Record{}, false, fmt.Errorf("%s: written by another user (uid %d) or writable by others: not taken", p, st.Uid)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, false, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return r, true, nil
}
