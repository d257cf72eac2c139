package attrs

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// exercise checks the Store semantics the agent relies on; run against the file store here and
// against Pacemaker's CIB in the integration test.
func exercise(t *testing.T, s Store) {
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, "node1", "a", Forever); err != nil || ok {
		t.Fatalf("unset attribute: ok=%v err=%v", ok, err)
	}
	if err := s.Set(ctx, "node1", "a", "1", Forever); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get(ctx, "node1", "a", Forever); err != nil || !ok || v != "1" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if _, ok, _ := s.Get(ctx, "node2", "a", Forever); ok {
		t.Fatal("attribute leaked to another node")
	}
	if err := s.Set(ctx, "node1", "a", "", Forever); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "node1", "a", Forever); ok {
		t.Fatal("deleted attribute still set")
	}
	if err := s.Set(ctx, "node1", "gone", "", Forever); err != nil {
		t.Fatalf("deleting an unset attribute: %v", err)
	}
	if h, err := s.Claim(ctx, "node1", ""); err != nil || h != "node1" {
		t.Fatalf("free claim: %q %v", h, err)
	}
	if h, err := s.Claim(ctx, "node2", ""); err != nil || h != "node1" {
		t.Fatalf("held claim taken: %q %v", h, err)
	}
	if err := s.Release(ctx, "node2"); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx); h != "node1" {
		t.Fatalf("claim released by a non-holder: %q", h)
	}
	if h, err := s.Claim(ctx, "node2", "node1"); err != nil || h != "node2" {
		t.Fatalf("claim of a fenced peer not taken over: %q %v", h, err)
	}
	if err := s.Release(ctx, "node2"); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx); h != "" {
		t.Fatalf("claim not released: %q", h)
	}
	if _, ok, err := s.Property(ctx, "p"); err != nil || ok {
		t.Fatalf("unset property: ok=%v err=%v", ok, err)
	}
	for _, v := range []string{"1", "2"} {
		if err := s.SetProperty(ctx, "p", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Property(ctx, "p"); err != nil || !ok || got != v {
			t.Fatalf("property: %q %v %v, want %q", got, ok, err, v)
		}
	}
	if err := s.SetProperty(ctx, "p", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Property(ctx, "p"); ok {
		t.Fatal("deleted property still set")
	}
}

func TestFileStore(t *testing.T) {
	exercise(t, File{Path: filepath.Join(t.TempDir(), "cib.json")})
}

// TestFileClaimIsExclusive: of many concurrent claimants exactly one gets the claim.
func TestFileClaimIsExclusive(t *testing.T) {
	s := File{Path: filepath.Join(t.TempDir(), "cib.json")}
	var wg sync.WaitGroup
	winners := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(owner string) {
			defer wg.Done()
			if h, err := s.Claim(context.Background(), owner, ""); err == nil && h == owner {
				winners <- owner
			}
		}(string(rune('a' + i)))
	}
	wg.Wait()
	close(winners)
	if n := len(winners); n != 1 {
		t.Fatalf("%d claimants won", n)
	}
}

func TestTransientAttributesLeaveWithTheNode(t *testing.T) {
	ctx := context.Background()
	s := File{Path: filepath.Join(t.TempDir(), "cib.json")}
	_ = s.Set(ctx, "node1", "t", "x", Reboot)
	_ = s.Set(ctx, "node1", "p", "y", Forever)
	if err := s.NodeLeft("node1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "node1", "t", Reboot); ok {
		t.Fatal("reboot attribute survived the node leaving")
	}
	if _, ok, _ := s.Get(ctx, "node1", "p", Forever); !ok {
		t.Fatal("forever attribute lost")
	}
}
