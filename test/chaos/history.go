package chaos

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// OpKind is what a workload operation does.
type OpKind string

const (
	Put OpKind = "put" // write Value
	Get OpKind = "get" // a linearizable read
	CAS OpKind = "cas" // write Value if the key holds Expect (an etcd transaction)
)

// Input is an operation as a client called it.
type Input struct {
	Op     OpKind `json:"op"`
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Expect string `json:"expect,omitempty"`
}

// Output is what the client got back.
type Output struct {
	Value string `json:"value,omitempty"` // Get: the value read
	OK    bool   `json:"ok,omitempty"`    // CAS: the comparison held and Value was written
	// Unknown: the call failed or timed out, so whether a write took effect is not known; it
	// may have, at any time after the call.
	Unknown bool   `json:"unknown,omitempty"`
	Err     string `json:"err,omitempty"`
}

// Op is one recorded operation; Call and Return are nanoseconds since the history began, on the
// monotonic clock.
type Op struct {
	Client int    `json:"client"`
	In     Input  `json:"in"`
	Out    Output `json:"out"`
	Call   int64  `json:"call"`
	Return int64  `json:"return"`
}

// Acknowledged says whether the operation is a write the cluster acknowledged.
func (o Op) Acknowledged() bool {
	return !o.Out.Unknown && (o.In.Op == Put || (o.In.Op == CAS && o.Out.OK))
}

// History records operations from concurrent clients.
type History struct {
	began time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewHistory starts a history now.
func NewHistory() *History { return &History{began: time.Now()} }

// Since is the history's timestamp of t.
func (h *History) Since(t time.Time) int64 { return int64(t.Sub(h.began)) }

// Time is the wall-clock time of a history timestamp.
func (h *History) Time(ts int64) time.Time { return h.began.Add(time.Duration(ts)) }

// Now is the history's timestamp of now.
func (h *History) Now() int64 { return h.Since(time.Now()) }

// Add records an operation.
func (h *History) Add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
}

// Ops are the operations recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// WriteJSONLines writes the history to path, one operation per line, through a temporary file.
func WriteJSONLines(path string, ops []Op) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return fsutil.WriteFileAtomic(path, b.Bytes(), 0o644)
}

// FirstWrite is how long after at the first write called after at was acknowledged; -1 if none
// was (a write in flight at at does not count: it may have been decided before).
func FirstWrite(ops []Op, at int64) time.Duration {
	first := time.Duration(-1)
	for _, op := range ops {
		if op.Acknowledged() && op.Call >= at && (first < 0 || time.Duration(op.Return-at) < first) {
			first = time.Duration(op.Return - at)
		}
	}
	return first
}

// LongestGap is the longest time in [from, to] without an acknowledged write returning (from
// and to count as the ends of the first and last gaps).
func LongestGap(ops []Op, from, to int64) time.Duration {
	var acked []int64
	for _, op := range ops {
		if op.Acknowledged() && op.Return >= from && op.Return <= to {
			acked = append(acked, op.Return)
		}
	}
	slices.Sort(acked)
	longest, last := time.Duration(0), from
	for _, at := range acked {
		longest = max(longest, time.Duration(at-last))
		last = at
	}
	return max(longest, time.Duration(to-last))
}
