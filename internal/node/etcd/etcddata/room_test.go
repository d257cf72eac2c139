package etcddata

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPlanRoom: copies are deleted oldest first and only while the room is short; the newest
// goes last; when even all of them do not make room, that is said.
func TestPlanRoom(t *testing.T) {
	copies := []Copy{{"a", 10}, {"b", 20}, {"c", 30}} // oldest first
	for _, tc := range []struct {
		name       string
		free, need uint64
		drop       []string
		enough     bool
		keep       string
	}{
		{"room already", 100, 50, nil, true, ""},
		{"exactly", 50, 50, nil, true, ""},
		{"the oldest is enough", 50, 55, []string{"a"}, true, ""},
		{"two", 50, 75, []string{"a", "b"}, true, ""},
		{"the newest too", 50, 110, []string{"a", "b", "c"}, true, ""},
		{"not even all", 50, 111, []string{"a", "b", "c"}, false, ""},
		{"no copies, room", 10, 5, nil, true, ""},
		// The newest copy holds the only writes an administrator gave up.
		{"kept, the others enough", 50, 75, []string{"a", "b"}, true, "c"},
		{"kept, the others not enough", 50, 110, []string{"a", "b"}, false, "c"},
		{"kept in the middle", 50, 85, []string{"a", "c"}, true, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := copies
			if tc.name == "no copies, room" {
				in = nil
			}
			drop, enough := PlanRoom(tc.free, tc.need, in, tc.keep)
			var names []string
			for _, c := range drop {
				names = append(names, c.Path)
			}
			if !slices.Equal(names, tc.drop) || enough != tc.enough {
				t.Errorf("PlanRoom(%d, %d) = %v, %v; want %v, %v", tc.free, tc.need, names, enough, tc.drop, tc.enough)
			}
		})
	}
}

// TestMakeRoom on a real 16 MiB file system: three data dirs moved aside fill most of it; a new
// member that needs more room than is left gets it from the oldest copies, the newest kept; one
// that cannot fit even without them deletes nothing and says so with the figures.
func TestMakeRoom(t *testing.T) {
	disk := filepath.Join(t.TempDir(), "disk")
	mountTmpfs(t, disk)
	dataDir := filepath.Join(disk, "etcd")
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	var moved []string
	for i := range 3 {
		if err := os.MkdirAll(filepath.Join(dataDir, "member", "snap"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dataDir, "member", "snap", "db"), make([]byte, 4<<20), 0o600); err != nil {
			t.Fatal(err)
		}
		dest, err := MoveAside(dataDir, 3, at.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, dest)
	}
	copies, err := Copies(dataDir)
	if err != nil || len(copies) != 3 || copies[0].Path != moved[0] || copies[2].Path != moved[2] || copies[0].Bytes != 4<<20 {
		t.Fatalf("copies %+v, %v; want the three moved, oldest first, 4 MiB each", copies, err)
	}
	free, err := Free(dataDir)
	if err != nil || free > 4<<20 || free < 3<<20 {
		t.Fatalf("free %d, %v; want about 4 MiB", free, err)
	}

	if _, err := MakeRoom(dataDir, 20<<20, ""); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("20 MiB on a 16 MiB disk: %v, want ErrNoRoom", err)
	}
	if after, _ := Copies(dataDir); len(after) != 3 {
		t.Fatalf("a room that cannot be made deleted copies: %d left", len(after))
	}

	// The newest copy holds the only writes an administrator gave up: 13 MiB, which all three
	// copies would make, cannot be made without it, and nothing is deleted.
	if _, err := MakeRoom(dataDir, 13<<20, moved[2]); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("13 MiB, the newest kept: %v, want ErrNoRoom", err)
	}
	if after, _ := Copies(dataDir); len(after) != 3 {
		t.Fatalf("a room that cannot be made without the kept copy deleted copies: %d left", len(after))
	}
	dropped, err := MakeRoom(dataDir, 9<<20, "")
	if err != nil || len(dropped) != 2 || dropped[0].Path != moved[0] || dropped[1].Path != moved[1] {
		t.Fatalf("9 MiB: dropped %+v, %v; want the two oldest", dropped, err)
	}
	if after, _ := Copies(dataDir); len(after) != 1 || after[0].Path != moved[2] {
		t.Fatalf("after making room: %+v, want the newest kept", after)
	}
}
