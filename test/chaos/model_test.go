package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func put(client int, key, value string, call, ret int64) Op {
	return Op{Client: client, In: Input{Op: Put, Key: key, Value: value}, Call: call, Return: ret}
}

func get(client int, key, value string, call, ret int64) Op {
	return Op{Client: client, In: Input{Op: Get, Key: key}, Out: Output{Value: value}, Call: call, Return: ret}
}

func cas(client int, key, expect, value string, ok bool, holds string, call, ret int64) Op {
	return Op{Client: client, In: Input{Op: CAS, Key: key, Expect: expect, Value: value}, Out: Output{OK: ok, Value: holds}, Call: call, Return: ret}
}

func unknown(op Op) Op {
	op.Out = Output{Unknown: true, Err: "context deadline exceeded"}
	return op
}

// TestCheck: histories etcd may produce pass, histories that lose or reorder writes fail.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []Op
		want porcupine.CheckResult
	}{
		{"sequential put and get", []Op{put(0, "a", "1", 0, 1), get(1, "a", "1", 2, 3)}, porcupine.Ok},
		{"initial value", []Op{get(0, "a", InitialValue, 0, 1)}, porcupine.Ok},
		{"stale read after an acknowledged put", []Op{put(0, "a", "1", 0, 1), get(1, "a", InitialValue, 2, 3)}, porcupine.Illegal},
		{"concurrent read sees either", []Op{put(0, "a", "1", 0, 10), get(1, "a", InitialValue, 2, 3), get(2, "a", "1", 4, 5)}, porcupine.Ok},
		{"value read back in time", []Op{put(0, "a", "1", 0, 10), get(1, "a", "1", 2, 3), get(2, "a", InitialValue, 4, 5)}, porcupine.Illegal},
		{"keys are independent", []Op{put(0, "a", "1", 0, 1), get(1, "b", InitialValue, 2, 3)}, porcupine.Ok},
		{"cas holds", []Op{cas(0, "a", InitialValue, "1", true, "", 0, 1), get(1, "a", "1", 2, 3)}, porcupine.Ok},
		{"cas held on a value that was not there", []Op{put(0, "a", "1", 0, 1), cas(1, "a", InitialValue, "2", true, "", 2, 3)}, porcupine.Illegal},
		{"cas refused, reads the value", []Op{put(0, "a", "1", 0, 1), cas(1, "a", InitialValue, "2", false, "1", 2, 3)}, porcupine.Ok},
		{"cas refused although it would hold", []Op{cas(1, "a", InitialValue, "2", false, InitialValue, 0, 1)}, porcupine.Illegal},
		{"two cas on one value both hold", []Op{cas(0, "a", InitialValue, "1", true, "", 0, 5), cas(1, "a", InitialValue, "2", true, "", 1, 6)}, porcupine.Illegal},
		{"unknown put never seen", []Op{unknown(put(0, "a", "1", 0, 1)), get(1, "a", InitialValue, 2, 3)}, porcupine.Ok},
		{"unknown put seen late", []Op{unknown(put(0, "a", "1", 0, 1)), get(1, "a", InitialValue, 2, 3), get(1, "a", "1", 4, 5)}, porcupine.Ok},
		{"unknown put seen, then gone", []Op{unknown(put(0, "a", "1", 0, 1)), get(1, "a", "1", 2, 3), get(1, "a", InitialValue, 4, 5)}, porcupine.Illegal},
		{"unknown put seen before its call", []Op{get(1, "a", "1", 0, 1), unknown(put(0, "a", "1", 2, 3))}, porcupine.Illegal},
		{"unknown cas seen", []Op{unknown(cas(0, "a", InitialValue, "1", false, "", 0, 1)), get(1, "a", "1", 2, 3)}, porcupine.Ok},
		{"refused cas reveals an unknown put", []Op{unknown(put(0, "a", "1", 0, 1)), cas(1, "a", InitialValue, "2", false, "1", 2, 3)}, porcupine.Ok},
		{"failed get tells nothing", []Op{put(0, "a", "1", 0, 1), unknown(get(1, "a", "", 2, 3))}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := Check(tc.ops, 10*time.Second); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// TestPrepare: what the checker gets of unknown operations.
func TestPrepare(t *testing.T) {
	ops := []Op{
		unknown(put(0, "a", "seen", 0, 1)),
		unknown(put(0, "a", "never-seen", 2, 3)),
		unknown(get(1, "a", "", 4, 5)),
		get(1, "a", "seen", 6, 7),
	}
	got := Prepare(ops)
	if len(got) != 2 {
		t.Fatalf("%d operations, want the seen unknown put and the get: %+v", len(got), got)
	}
	if got[0].Input.(Input).Value != "seen" || got[0].Return != 1<<63-1 {
		t.Fatalf("the unknown put that was seen: %+v, want it returning at infinity", got[0])
	}
}

// TestVisualize: a violation's history is drawn as porcupine's HTML page.
func TestVisualize(t *testing.T) {
	res, info := Check([]Op{put(0, "a", "1", 0, 1), get(1, "a", InitialValue, 2, 3)}, time.Second)
	if res != porcupine.Illegal {
		t.Fatalf("%s, want illegal", res)
	}
	path := filepath.Join(t.TempDir(), "history.html")
	if err := Visualize(info, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `put(a, \"1\") → ok`) && !strings.Contains(string(data), `put(a, "1") → ok`) {
		t.Fatalf("%v: the page does not draw the put", err)
	}
}

// TestHistoryFile: the history is written one operation per line, nothing half-written.
func TestHistoryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	if err := WriteJSONLines(path, []Op{put(0, "a", "1", 0, 1), unknown(get(1, "a", "", 2, 3))}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Count(string(data), "\n"); lines != 2 || !strings.Contains(string(data), `"unknown":true`) {
		t.Fatalf("%d lines:\n%s", lines, data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files left in the folder, want the history alone", len(entries))
	}
	if err := WriteJSONLines(filepath.Join(dir, "missing", "h.jsonl"), nil); err == nil {
		t.Fatal("no error writing into a missing folder")
	}
}
