// Package etcdcheck is the tests' proof that no acknowledged write is lost: a writer that puts
// a new key at a steady pace and records each write etcd acknowledged (and when), and a check
// that a member holds every one of them. The namespace cluster tests and the QEMU boot tests
// share it.
package etcdcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Prefix is where the writer's keys live.
const Prefix = "w/"

// Put writes one key, within ctx.
type Put func(ctx context.Context, key string) error

// PutThrough is a Put on one client.
func PutThrough(cli *clientv3.Client) Put {
	return func(ctx context.Context, key string) error {
		_, err := cli.Put(ctx, key, "v")
		return err
	}
}

// Writer puts Prefix+NNNNNN every interval.
type Writer struct {
	put     Put
	mu      sync.Mutex
	acked   []string
	ackedAt []time.Time
	next    int
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start begins writing; each put may take up to timeout.
func Start(put Put, interval, timeout time.Duration) *Writer {
	w := &Writer{put: put, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			key := fmt.Sprintf("%s%06d", Prefix, w.next)
			w.next++
			pctx, pcancel := context.WithTimeout(ctx, timeout)
			err := w.put(pctx, key)
			pcancel()
			if err == nil {
				w.mu.Lock()
				w.acked = append(w.acked, key)
				w.ackedAt = append(w.ackedAt, time.Now())
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}()
	return w
}

// Count is the number of acknowledged writes so far.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// FirstAckAfter is when the first write acknowledged after t was; false if none was.
func (w *Writer) FirstAckAfter(t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, at := range w.ackedAt {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// BackAfter is when writes came back after an outage that began at t: the acknowledgement that
// ended the longest wait between acknowledged writes from t on. A write in flight at t can be
// acknowledged just after it, before the outage shows: the first acknowledgement after t would
// be that one. False if none came after t.
func (w *Writer) BackAfter(t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	back, _, last := w.longestWait(t, time.Time{})
	return back, last.After(t)
}

// LongestGap is the longest time without an acknowledged write between from and to (from and
// to count as the ends of the first and last gaps).
func (w *Writer) LongestGap(from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, longest, last := w.longestWait(from, to)
	return max(longest, to.Sub(last))
}

// longestWait looks at the acknowledgements after from and, unless to is zero, not after to:
// the one that ended the longest wait since the one before it (from counting as the first), that
// wait, and the last of them (from when there is none). The caller holds mu.
func (w *Writer) longestWait(from, to time.Time) (end time.Time, wait time.Duration, last time.Time) {
	last = from
	for _, at := range w.ackedAt {
		if !at.After(from) || (!to.IsZero() && at.After(to)) {
			continue
		}
		if gap := at.Sub(last); end.IsZero() || gap > wait {
			end, wait = at, gap
		}
		last = at
	}
	return end, wait, last
}

// Stop ends the writer and returns every acknowledged key.
func (w *Writer) Stop() []string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// Acked is every key acknowledged so far.
func (w *Writer) Acked() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// CheckAcked takes a new write through cli (the member is writable) and checks that it holds
// every key in acked.
func CheckAcked(ctx context.Context, cli *clientv3.Client, acked []string) error {
	if _, err := cli.Put(ctx, "check/writable", "v"); err != nil {
		return fmt.Errorf("etcd does not take a write: %w", err)
	}
	missing, err := Missing(ctx, cli, acked)
	if err != nil {
		return err
	}
	if missing > 0 {
		return fmt.Errorf("%d of %d acknowledged writes are missing", missing, len(acked))
	}
	return nil
}

// Missing counts the keys the member behind cli does not hold.
func Missing(ctx context.Context, cli *clientv3.Client, keys []string) (int, error) {
	resp, err := cli.Get(ctx, Prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, kv := range resp.Kvs {
		have[string(kv.Key)] = true
	}
	missing := 0
	for _, k := range keys {
		if !have[k] {
			missing++
		}
	}
	return missing, nil
}

// Identity is the cluster ID and the members' IDs by name, through cli; a learner is an error.
func Identity(ctx context.Context, cli *clientv3.Client) (uint64, map[string]uint64, error) {
	list, err := cli.MemberList(ctx)
	if err != nil {
		return 0, nil, err
	}
	ids := map[string]uint64{}
	for _, m := range list.Members {
		if m.IsLearner {
			return 0, nil, fmt.Errorf("%s is a learner", m.Name)
		}
		ids[m.Name] = m.ID
	}
	return list.Header.ClusterId, ids, nil
}

// Versions is what the etcd at clientURL reports at /version: its own version and its cluster's.
func Versions(hc *http.Client, clientURL string) (version.Versions, error) {
	var v version.Versions
	resp, err := hc.Get(clientURL + "/version")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("%s/version: %s", clientURL, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("%s/version: %w", clientURL, err)
	}
	return v, nil
}
