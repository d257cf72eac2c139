package etcdnode

import "testing"

// FuzzParseRecord: a published data record, whoever wrote it, is read or refused without a
// panic, and one that is read means what it says: written again and read back, it is the same.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{"none", "a1b2:42", "a1b2:42:learner", "a1b2:42:voter", ":", "ffffffffffffffff:18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseRecord(v)
		if err != nil {
			return
		}
		if again, err := ParseRecord(Record(d)); err != nil || again != d {
			t.Fatalf("%q read as %+v, written as %q, read back as %+v (%v)", v, d, Record(d), again, err)
		}
	})
}

// FuzzParseTally: a counting attribute, whoever wrote it, is read or refused without a panic,
// never negative, and the same when written again and read back.
func FuzzParseTally(f *testing.F) {
	for _, s := range []string{"", "3 1764150000", "-1 0", "1", "x y", "9223372036854775807 -9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		fc, err := ParseTally(AttrForced, v)
		if err != nil {
			return
		}
		if fc.Count < 0 {
			t.Fatalf("%q read as a negative count %d", v, fc.Count)
		}
		if again, err := ParseTally(AttrForced, FormatTally(fc)); err != nil || again != fc {
			t.Fatalf("%q read as %+v, written as %q, read back as %+v (%v)", v, fc, FormatTally(fc), again, err)
		}
	})
}
