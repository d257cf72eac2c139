package metrics

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Shared gives every scrape a share of one reading. A reading starts several cluster tools and
// an etcd TLS dial: a flood of scrapes, each reading on its own, could push etcd's status read
// past the agent's liveness_timeout, and the monitor would kill a healthy etcd as frozen. So at
// most one reading runs at a time (the scrapes that come meanwhile wait for it), and a scrape
// within MaxAge of the last reading's end is given that one.
type Shared struct {
	Read   func(context.Context) Reading
	MaxAge time.Duration
	Now    func() time.Time // default time.Now

	group    singleflight.Group
	mu       sync.Mutex
	last     Reading
	at       time.Time // when last was taken; zero before the first
	readings uint64
}

// Get returns the last reading while it is younger than MaxAge, else takes one, or waits for
// the one another scrape is taking.
func (s *Shared) Get(ctx context.Context) Reading {
	if r, ok := s.fresh(); ok {
		return r
	}
	r, _, _ := s.group.Do("reading", func() (any, error) {
		// A reading that ended after this scrape looked, and before it got here, is fresh.
		if r, ok := s.fresh(); ok {
			return r, nil
		}
		r := s.Read(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.readings++
		r.Readings = s.readings
		s.last, s.at = r, s.now()
		return r, nil
	})
	return r.(Reading)
}

// fresh returns the last reading while it is younger than MaxAge.
func (s *Shared) fresh() (Reading, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, !s.at.IsZero() && s.now().Sub(s.at) < s.MaxAge
}

func (s *Shared) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}
