package powerwatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// Watcher reads one node's power while its link looks down.
type Watcher struct {
	Node string
	// Credential is the node's BMC credential, read again at each loss of the link: a password
	// rotated since is used (its BMC's address is the one read at Run's start).
	Credential func() (bmc.Credential, error)
	// Down says whether the node looks gone (its Corosync links are down); an error is no.
	Down func(context.Context) (bool, error)
	Dir  string // default Dir
	// Gap is the least time from one read's start to the next's (the first level's gap).
	Gap         time.Duration
	ReadTimeout time.Duration
	// ReadFor is how long reads go on after the link was lost: by then the fencing is done, or
	// the second level's.
	ReadFor time.Duration
	// Interval is how often the links are looked at while the peer's heartbeat is not heard, or
	// the link is down.
	Interval time.Duration
	// PeerHeard says whether the peer's heartbeat comes in (nil: never).
	PeerHeard func() bool
	// Recheck is how often the links are looked at while the peer's heartbeat is heard.
	Recheck time.Duration
	Log     *slog.Logger
}

// Defaults: without the peer's heartbeat the links are looked at twice a second (knet itself
// notices a lost link within one to two seconds; each look is a corosync-cfgtool run); the reads
// go on for half a minute, one a gap (and a tenth, so that two answers of a fast BMC are a whole
// gap apart).
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultReadFor  = 30 * time.Second
)

func (w *Watcher) defaults() {
	if w.Dir == "" {
		w.Dir = Dir
	}
	if w.Interval == 0 {
		w.Interval = DefaultInterval
	}
	if w.ReadFor == 0 {
		w.ReadFor = DefaultReadFor
	}
	if w.Recheck == 0 {
		w.Recheck = DefaultRecheck
	}
	if w.PeerHeard == nil {
		w.PeerHeard = func() bool { return false }
	}
}

// Run watches until ctx ends. The record of an episode (from the link's loss to its return)
// is removed when the link comes back: a read from before then says nothing of a later loss.
func (w Watcher) Run(ctx context.Context) error {
	w.defaults()
	cred, err := w.Credential()
	if err != nil {
		return err
	}
	path := Path(w.Dir, cred)
	if err := fsutil.RemoveIfExists(path); err != nil {
		return err
	}
	var reading *episode
	end := func() {
		if reading == nil {
			return
		}
		reading.stop()
		reading = nil
		if err := fsutil.RemoveIfExists(path); err != nil {
			w.Log.Error("removing the record", "err", err)
		}
	}
	defer end()
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	looked := BootClock() - w.Recheck // BootClock at the last look at the links: the first is due
	heard := false
	for {
		if h := w.PeerHeard(); h != heard {
			heard = h
			w.Log.Info("the peer's heartbeat", "peer", w.Node, "heard", heard)
		}
		// Without the heartbeat, or while reading, every tick looks. With it, a look is due half
		// a tick early: a tick wakes the loop a little late, and a strict bound would wait a
		// whole tick more every other time.
		if reading != nil || !heard || BootClock()-looked >= w.Recheck-w.Interval/2 {
			looked = BootClock()
			down, err := w.Down(ctx)
			switch {
			case err == nil && down && reading == nil:
				w.Log.Info("the link to the peer is down: reading its BMC", "peer", w.Node)
				reading = w.start(ctx, path)
			case (err != nil || !down) && reading != nil:
				w.Log.Info("the link to the peer is back", "peer", w.Node)
				end()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// episode is the reading that a loss of the link starts.
type episode struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the reading and waits for it: nothing is recorded after stop returns.
func (e *episode) stop() {
	e.cancel()
	<-e.done
}

// start reads for ReadFor from now.
func (w Watcher) start(ctx context.Context, path string) *episode {
	ctx, cancel := context.WithTimeout(ctx, w.ReadFor)
	e := &episode{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		w.read(ctx, path, BootClock())
	}()
	return e
}

// read reads the power from the link's loss until ctx ends, and records each read.
func (w Watcher) read(ctx context.Context, path string, lost time.Duration) {
	cred, err := w.Credential()
	if err != nil {
		w.Log.Error("the peer's BMC is not read", "err", err)
		return
	}
	s, err := bmc.OpenSystem(ctx, cred, bmc.Options{Timeout: w.ReadTimeout, UserAgent: "tnfctl power-watch"})
	if err != nil {
		w.Log.Error("the peer's BMC is not read", "err", err)
		return
	}
	defer s.Close()
	rec := Record{Node: w.Node, System: system(cred), Check: checkOf(cred), LinkLost: lost}
	next := lost
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(next - BootClock()):
		}
		began := BootClock()
		r := s.ReadPower()
		at := BootClock()
		if ctx.Err() != nil {
			return
		}
		rd := Read{Began: began, At: at, State: r.State}
		if r.Err != nil {
			rd.Err = r.Err.Error()
		}
		rec.Reads = append(rec.Reads, rd)
		if err := Write(path, rec); err != nil {
			w.Log.Error("recording a read", "err", err)
		}
		w.Log.Info("read", "peer", w.Node, "power_state", rd.State, "err", rd.Err, "took", (at - began).Round(time.Millisecond))
		next = max(began+w.Gap+w.Gap/10, at)
	}
}
