package identity

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

const (
	uuid1 = "4c4c4544-0035-4410-8051-b4c04f4b4e32"
	uuid2 = "4c4c4544-0035-4410-8052-b4c04f4b4e32"
	// uuid1 as some firmware gives it: the first three fields' bytes reversed.
	uuid1Swapped = "44454c4c-3500-1044-8051-b4c04f4b4e32"
	mac1, mac2   = "52:54:00:00:01:01", "52:54:00:00:01:02"
)

func TestNew(t *testing.T) {
	id := New(" 4C4C4544-0035-4410-8051-B4C04F4B4E32\n", []string{"52:54:00:00:01:01", "52-54-00-00-01-01", "00:00:00:00:00:00", "", "not a mac", "52:54:00:00:01:0A"})
	if id.UUID != uuid1 || strings.Join(id.MACs, " ") != "52:54:00:00:01:01 52:54:00:00:01:0a" {
		t.Fatalf("%+v", id)
	}
	for _, none := range []string{"00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", ""} {
		if got := New(none, nil).UUID; got != "" {
			t.Errorf("%q read as UUID %q", none, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, id := range []Identity{New(uuid1, []string{mac1, mac2}), New("", []string{mac1}), New(uuid1, nil), {}} {
		got, err := Parse(id.String())
		if err != nil || got.String() != id.String() {
			t.Errorf("%q: %+v, %v", id, got, err)
		}
	}
	for _, bad := range []string{"", "uuid=x", "macs=a uuid=b", "uuid= mac="} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), Attr) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sys, m Identity
		want   Verdict
	}{
		{"same UUID", New(uuid1, nil), New(uuid1, []string{mac2}), Same},
		{"UUID in the other byte order", New(uuid1Swapped, nil), New(uuid1, nil), Same},
		{"a MAC on both", New("", []string{mac2, mac1}), New("", []string{mac1}), Same},
		{"UUIDs differ, a MAC matches", New(uuid2, []string{mac1}), New(uuid1, []string{mac1}), Same},
		{"different UUID", New(uuid2, nil), New(uuid1, nil), Different},
		{"different MACs", New("", []string{mac2}), New("", []string{mac1}), Different},
		{"UUID on one side, MACs on the other", New(uuid1, nil), New("", []string{mac1}), Unknown},
		{"nothing", New("", nil), New("", nil), Unknown},
	} {
		if got := Compare(tc.sys, tc.m); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestVerify(t *testing.T) {
	machines := map[string]Identity{"node1": New(uuid1, []string{mac1}), "node2": New(uuid2, []string{mac2})}
	for _, tc := range []struct {
		name   string
		target string
		sys    Identity
		want   string // "" for no error
	}{
		{"its own machine", "node1", New(uuid1, nil), ""},
		{"by MAC", "node2", New("", []string{mac2}), ""},
		{"swapped entries", "node1", New(uuid2, nil), "swapped"},
		{"swapped, by MAC", "node2", New("", []string{mac1}), "swapped"},
		{"another machine", "node1", New("11111111-2222-3333-4444-555555555555", nil), "not node1's"},
		{"nothing to compare", "node1", New("", nil), "nothing to compare"},
		{"unpublished", "node3", New(uuid1, nil), "published no identity"},
		{"a BMC that matches both machines", "node1", New(uuid1, []string{mac2}), "matches both"},
	} {
		err := Verify(tc.target, tc.sys, machines)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestLocal reads this machine: whatever it has, it is an identity that parses back.
func TestLocal(t *testing.T) {
	id, err := Local()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Parse(id.String()); err != nil || got.String() != id.String() {
		t.Fatalf("%q: %+v, %v", id, got, err)
	}
}

// TestPublished: what a node publishes reads back, this boot's copy first; one not published,
// or published as something else, is said so.
func TestPublished(t *testing.T) {
	ctx := context.Background()
	store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
	for node, id := range map[string]Identity{"node1": New(uuid1, nil), "node2": New("", []string{mac2})} {
		if err := Publish(ctx, store, node, id); err != nil {
			t.Fatal(err)
		}
	}
	m, ok, err := Published(ctx, store, []string{"node1", "node2"})
	if err != nil || !ok || m["node1"].UUID != uuid1 || m["node2"].MACs[0] != mac2 {
		t.Fatalf("%+v %v %v", m, ok, err)
	}
	// A later boot: only the permanent copy is left.
	if err := store.NodeLeft("node1"); err != nil {
		t.Fatal(err)
	}
	if m, ok, err := Published(ctx, store, []string{"node1"}); err != nil || !ok || m["node1"].UUID != uuid1 {
		t.Fatalf("after a reboot: %+v %v %v", m, ok, err)
	}
	if _, ok, err := Published(ctx, store, []string{"node1", "node3"}); ok || err != nil {
		t.Fatalf("one not published: %v %v", ok, err)
	}
	if err := store.Set(ctx, "node2", Attr, "garbage", attrs.Reboot); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Published(ctx, store, []string{"node1", "node2"}); err == nil || !strings.Contains(err.Error(), "node2") {
		t.Fatalf("a bad value: %v", err)
	}
}

// FuzzParse: whatever a node attribute holds, reading it never panics, and what reads is kept as
// written (normalised): the identity a check compares is the one the node published.
func FuzzParse(f *testing.F) {
	f.Add(New(uuid1, []string{mac1, mac2}).String())
	f.Add("uuid= macs=")
	f.Add("uuid=x macs=zz:zz")
	f.Fuzz(func(t *testing.T, v string) {
		id, err := Parse(v)
		if err != nil {
			return
		}
		again, err := Parse(id.String())
		if err != nil || again.String() != id.String() {
			t.Fatalf("%q read as %q, which reads as %q (%v)", v, id, again, err)
		}
	})
}

// TestVerifyIgnoresWhatBothShare: a placeholder UUID both machines report (or a MAC address
// both have) tells them apart no better than nothing, so it proves no entry right.
func TestVerifyIgnoresWhatBothShare(t *testing.T) {
	placeholder := "03000200-0400-0500-0006-000700080009"
	machines := map[string]Identity{"node1": New(placeholder, []string{mac1}), "node2": New(placeholder, []string{mac2})}
	if err := Verify("node1", New(placeholder, nil), machines); !errors.Is(err, ErrNothingToCompare) {
		t.Errorf("by the shared UUID alone: %v", err)
	}
	if err := Verify("node1", New(placeholder, []string{mac1}), machines); err != nil {
		t.Errorf("by its own MAC: %v", err)
	}
	if err := Verify("node1", New(placeholder, []string{mac2}), machines); err == nil || !strings.Contains(err.Error(), "swapped") {
		t.Errorf("by the other's MAC: %v", err)
	}
}
