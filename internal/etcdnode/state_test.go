package etcdnode

import (
	"os"
	"testing"
	"time"
)

// A leader seen now proves the peer alive only LeaderLease ago: the mark lies that far back,
// again when it is renewed.
func TestMarkLeaderSeenLiesALeaseBack(t *testing.T) {
	c := Config{StateDir: t.TempDir()}
	for range 2 {
		before := time.Now()
		if err := c.MarkLeaderSeen(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(c.LeaderSeenFile())
		if err != nil {
			t.Fatal(err)
		}
		if got := st.ModTime(); got.After(before.Add(-LeaderLease).Add(time.Second)) || got.Before(before.Add(-LeaderLease).Add(-time.Second)) {
			t.Fatalf("leader seen at %v, want about %v", got, before.Add(-LeaderLease))
		}
	}
}
