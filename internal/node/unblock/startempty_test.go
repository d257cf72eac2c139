package unblock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

// TestGiveUpServed: only the recorded cluster ID, typed as status gives it, is accepted.
func TestGiveUpServed(t *testing.T) {
	ctx := context.Background()
	store := attrs.File{Path: filepath.Join(t.TempDir(), "cib.json")}
	if _, err := NamedServed(ctx, store, "c0ffee"); !errors.Is(err, ErrNotTheServed) {
		t.Fatalf("nothing recorded: %v", err)
	}
	if err := store.SetProperty(ctx, etcdnode.PropServed, "c0ffee"); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{"", "d00d", "not hex", "0xc0ffee"} {
		if _, err := NamedServed(ctx, store, named); !errors.Is(err, ErrNotTheServed) {
			t.Errorf("%q: %v", named, err)
		}
	}
	if id, err := NamedServed(ctx, store, "C0FFEE"); err != nil || id != 0xc0ffee {
		t.Fatalf("the recorded ID: %x, %v", id, err)
	}
	if err := GiveUpServed(ctx, store); err != nil {
		t.Fatal(err)
	}
	if id, err := etcdnode.ReadServed(ctx, store); err != nil || id != 0 {
		t.Fatalf("record after giving it up: %x, %v", id, err)
	}
	// A record that is no cluster ID: only its exact text gives it up.
	if err := store.SetProperty(ctx, etcdnode.PropServed, "not-hex"); err != nil {
		t.Fatal(err)
	}
	if _, err := NamedServed(ctx, store, "c0ffee"); err == nil {
		t.Fatal("a malformed record given up by another name")
	}
	if _, err := NamedServed(ctx, store, "not-hex"); err != nil {
		t.Fatalf("the malformed record by its text: %v", err)
	}
}
