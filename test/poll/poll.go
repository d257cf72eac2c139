// Package poll is the tests' bounded wait: a condition checked at a fixed interval until it
// holds or a limit passes, with the last state it saw in the failure.
package poll

import (
	"testing"
	"time"
)

// Until checks cond every interval until it holds, and returns how long that took; after limit
// the test fails with what and cond's last state.
func Until(t testing.TB, what string, limit, interval time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	began := time.Now()
	last := ""
	for time.Since(began) < limit {
		ok, state := cond()
		if ok {
			t.Logf("%s after %v", what, time.Since(began).Round(100*time.Millisecond))
			return time.Since(began)
		}
		last = state
		time.Sleep(interval)
	}
	t.Fatalf("%s: not within %v; last state: %s", what, limit, last)
	return 0
}
