package gather

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// read returns a bundle's members as text.
func read(t *testing.T, path string) map[string]string {
	t.Helper()
	members, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, data := range members {
		out[name] = string(data)
	}
	return out
}

func text(s string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) { return []byte(s), nil }
}

// TestWrite: secrets scrubbed (the longer first), a failing item listed with its reason, a
// failing command's output kept, a long log cut to its end, the size bound ending the
// collection, a hung item ended by its timeout, an absent optional one left out silently; the
// manifest says all of it.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bundle.tar.gz")
	o := Options{
		Secrets:   [][]byte{[]byte("pw"), []byte("hunter2"), []byte("hunter2-long")},
		ItemLimit: 16, TotalLimit: 40, ItemTimeout: 100 * time.Millisecond,
		Items: []Item{
			{Name: "status.json", Collect: text("p=hunter2-long q=hunter2 pw")},
			{Name: "cib.xml", Collect: func(context.Context) ([]byte, error) { return nil, errors.New("cibadmin: connection refused") }},
			{Name: "quorum.txt", Collect: func(context.Context) ([]byte, error) { return []byte("Quorate: No"), errors.New("exit status 2") }},
			{Name: "hung.txt", Collect: func(ctx context.Context) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() }},
			{Name: "absent.txt", Collect: func(context.Context) ([]byte, error) { return nil, nil }},
			{Name: "pacemaker.log", Collect: text("old line\nnew line\nnewest\n")},
			{Name: "late.txt", Collect: text("never read")},
		},
	}
	m, err := Write(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, path)
	want := map[string]string{
		"status.json":   " q=<redacted> pw", // the last 16 bytes of "p=<redacted> q=<redacted> pw"
		"quorum.txt":    "Quorate: No",
		"pacemaker.log": " line\nnewest\n", // what the size bound leaves: its last 13 bytes
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	var manifest Manifest
	if err := json.Unmarshal([]byte(got["manifest.json"]), &manifest); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(manifest.Collected, m.Collected) || len(got) != 4 {
		t.Fatalf("members %v, manifest %+v", got, manifest)
	}
	wantCollected := []Member{{"status.json", 16, true, 2}, {"quorum.txt", 11, false, 0}, {"pacemaker.log", 13, true, 0}}
	if !reflect.DeepEqual(m.Collected, wantCollected) {
		t.Errorf("collected %+v\nwant      %+v", m.Collected, wantCollected)
	}
	reasons := map[string]string{}
	for _, x := range m.Missing {
		reasons[x.Name] = x.Reason
	}
	if _, ok := reasons["absent.txt"]; ok {
		t.Error("absent.txt, with nothing to collect, is listed as missing")
	}
	for name, part := range map[string]string{"cib.xml": "connection refused", "quorum.txt": "exit status 2",
		"hung.txt": "deadline exceeded", "late.txt": "size bound (40 bytes)"} {
		if !strings.Contains(reasons[name], part) {
			t.Errorf("missing %s: %q, want it to say %q", name, reasons[name], part)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("bundle mode: %v %v", fi, err)
	}
}

// TestWriteLeavesNothing: a bundle that cannot be written leaves no file behind.
func TestWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(context.Background(), filepath.Join(dir, "missing", "b.tar.gz"), Options{ItemLimit: 1, TotalLimit: 1, ItemTimeout: time.Second}); err == nil {
		t.Fatal("no error for a folder that does not exist")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestScrubForms: a secret is scrubbed as it stands in JSON, XML and URLs too, and where the
// start or the end of the data cuts it.
func TestScrubForms(t *testing.T) {
	secret := `p@ss"w<rd&x y/z`
	forms := map[string]string{
		"raw":                        "password=" + secret + "\n",
		"json":                       `{"password": "p@ss\"w\u003crd\u0026x y/z"}`,
		"json without HTML escaping": `{"password": "p@ss\"w<rd&x y/z"}`,
		"xml":                        `<nvpair value="p@ss&#34;w&lt;rd&amp;x y/z"/>`,
		"url":                        "GET /login?pw=p%40ss%22w%3Crd%26x+y%2Fz HTTP/1.1",
		"path":                       "/secrets/p@ss%22w%3Crd&x%20y%2Fz/",
		"head":                       secret[6:] + " and then the log goes on",
		"tail":                       "the log ends with " + secret[:9],
	}
	for name, data := range forms {
		got, n := scrub([]byte(data), secretForms([][]byte{[]byte(secret)}))
		if n == 0 || !strings.Contains(string(got), Redacted) {
			t.Errorf("%s: %q scrubbed to %q", name, data, got)
		}
		for _, part := range []string{"p@ss", "rd&x", "x y/z", "w<rd", "ss%22", "w%3Crd", "ss\\\"", "ss&#34;"} {
			if strings.Contains(string(got), part) {
				t.Errorf("%s: %q left in %q", name, part, got)
			}
		}
	}
}
