package contract

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		v    string
		ok   bool
		want int
		bad  bool
	}{
		{"", false, 1, false},
		{"1", true, 1, false},
		{"7", true, 7, false},
		{"0", true, Malformed, true},
		{"-1", true, Malformed, true},
		{"one", true, Malformed, true},
		{"2.1", true, Malformed, true},
		{"", true, Malformed, true},
	} {
		got, err := Parse(tc.v, tc.ok)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("Parse(%q, %v) = %d, %v; want %d, error %v", tc.v, tc.ok, got, err, tc.want, tc.bad)
		}
	}
}

func TestReadable(t *testing.T) {
	for _, tc := range []struct {
		peer int
		want bool
	}{{Malformed, false}, {0, false}, {Version - 2, false}, {Version - 1, Version > 1}, {Version, true}, {Version + 1, true}, {Version + 2, false}} {
		if got := Readable(tc.peer); got != tc.want {
			t.Errorf("Readable(%d) = %v, want %v", tc.peer, got, tc.want)
		}
	}
}
