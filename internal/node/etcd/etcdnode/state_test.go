package etcdnode

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// A leader seen now proves the peer alive only a LeaderLease ago, two of the election timeouts
// etcd was launched with (etcd's default without a record): the mark lies that far back, again
// when it is renewed.
func TestMarkLeaderSeenLiesALeaseBack(t *testing.T) {
	for _, c := range []struct {
		name     string
		recorded time.Duration
		want     time.Duration
	}{
		{"no record: etcd's default", 0, 2 * time.Second},
		{"the operator's standard hardware", time.Second, 2 * time.Second},
		{"the operator's slower hardware", 2500 * time.Millisecond, 5 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{StateDir: t.TempDir()}
			if c.recorded > 0 {
				if err := cfg.RecordElectionTimeout(c.recorded); err != nil {
					t.Fatal(err)
				}
			}
			if got := cfg.LeaderLease(); got != c.want {
				t.Fatalf("LeaderLease = %v, want %v", got, c.want)
			}
			for range 2 {
				before := time.Now()
				if err := cfg.MarkLeaderSeen(); err != nil {
					t.Fatal(err)
				}
				st, err := os.Stat(cfg.LeaderSeenFile())
				if err != nil {
					t.Fatal(err)
				}
				if got := st.ModTime(); got.After(before.Add(-c.want).Add(time.Second)) || got.Before(before.Add(-c.want).Add(-time.Second)) {
					t.Fatalf("leader seen at %v, want about %v", got, before.Add(-c.want))
				}
			}
		})
	}
}

// A record etcd could not have been started with counts as no record.
func TestLeaderLeaseIgnoresABadRecord(t *testing.T) {
	cfg := Config{StateDir: t.TempDir()}
	for _, bad := range []string{"", "0", "1s", "-5"} {
		if err := os.WriteFile(cfg.ElectionTimeoutFile(), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := cfg.LeaderLease(); got != 2*time.Second {
			t.Errorf("record %q: LeaderLease = %v, want etcd's default's 2s", bad, got)
		}
	}
}

// TestTally: a count as the agent writes it and reads it back; a value it did not write is an
// error that names the attribute.
func TestTally(t *testing.T) {
	f := Tally{Count: 3, Last: time.Date(2026, 11, 24, 19, 20, 7, 0, time.UTC)}
	if got, err := ParseTally(AttrForced, FormatTally(f)); err != nil || got != f {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if got, err := ParseTally(AttrForced, ""); err != nil || got != (Tally{}) {
		t.Fatalf("none: %+v %v", got, err)
	}
	for _, bad := range []string{"three", "-1 0", "3"} {
		if _, err := ParseTally(AttrCopiesDropped, bad); err == nil || !strings.Contains(err.Error(), AttrCopiesDropped) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestReloadableValuesNameEveryReloadableParameter: the line the watcher records
// (ReloadableValues) names each parameter marked reloadable, and no other: one marked later but
// left out would never make a running watcher stale.
func TestReloadableValuesNameEveryReloadableParameter(t *testing.T) {
	var marked, recorded []string
	for _, p := range Parameters {
		if p.Reloadable {
			marked = append(marked, p.Name)
		}
	}
	for _, kv := range strings.Fields(Config{}.ReloadableValues()) {
		name, _, _ := strings.Cut(kv, "=")
		recorded = append(recorded, name)
	}
	slices.Sort(marked)
	slices.Sort(recorded)
	if !slices.Equal(marked, recorded) {
		t.Errorf("ReloadableValues names %v, the reloadable parameters are %v", recorded, marked)
	}
}
