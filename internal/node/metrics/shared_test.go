package metrics

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedReading: 100 scrapes at once cost one reading; a scrape after MaxAge takes another.
func TestSharedReading(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var reads, inFlight, mostInFlight atomic.Int32
	release := make(chan struct{})
	s := &Shared{MaxAge: 5 * time.Second, Now: func() time.Time { return now }, Read: func(context.Context) Reading {
		reads.Add(1)
		mostInFlight.Store(max(mostInFlight.Load(), inFlight.Add(1)))
		<-release
		inFlight.Add(-1)
		return Reading{Node: "node1"}
	}}
	var wg sync.WaitGroup
	got := make([]Reading, 100)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.Get(context.Background())
		}()
	}
	for i := 0; reads.Load() == 0; i++ {
		if i == 1000 {
			t.Fatal("no reading started within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i, r := range got {
		if r.Node != "node1" || r.Readings != 1 {
			t.Fatalf("scrape %d got %+v", i, r)
		}
	}
	if reads.Load() != 1 || mostInFlight.Load() != 1 {
		t.Fatalf("100 scrapes: %d readings, %d at once; want 1", reads.Load(), mostInFlight.Load())
	}
	now = now.Add(4 * time.Second)
	if r := s.Get(context.Background()); r.Readings != 1 || reads.Load() != 1 {
		t.Fatalf("a scrape within MaxAge read again: %d readings", reads.Load())
	}
	now = now.Add(time.Second)
	if r := s.Get(context.Background()); r.Readings != 2 || reads.Load() != 2 {
		t.Fatalf("a scrape after MaxAge: reading %d, %d readings; want the second", r.Readings, reads.Load())
	}
}
