// Package gather writes a support bundle: one .tar.gz of what each item collects, every member
// scrubbed of the secrets the caller names, each bounded in size and the whole too, and a
// manifest that lists what was collected and what could not be, with why. An item that fails
// never stops the others: a bundle from an inert node, or one with Pacemaker down, is the one
// support needs most.
package gather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Item is one member of the bundle and how to collect it.
type Item struct {
	Name string // path in the bundle
	// Collect returns the member's content. Content returned with an error (a command's output
	// before it failed) is kept, and the error noted. Nothing and no error: there is nothing to
	// collect (a state file that exists only in some states), and nothing is noted.
	Collect func(ctx context.Context) ([]byte, error)
}

// Options bound a bundle.
type Options struct {
	Items []Item
	// Secrets are scrubbed from every member (replaced by Redacted): the bundle never holds them,
	// whatever a log or a command printed.
	Secrets [][]byte
	// ItemLimit keeps each member's last ItemLimit bytes (logs: the newest part matters).
	ItemLimit int64
	// TotalLimit ends the collection once the members reach it; the rest is listed as missing.
	TotalLimit int64
	// ItemTimeout bounds each item's collection.
	ItemTimeout time.Duration
}

// Redacted replaces a secret in a member.
const Redacted = "<redacted>"

// minSecret is the shortest secret scrubbed: shorter values would scrub ordinary text.
const minSecret = 4

// Manifest is manifest.json, the bundle's last member.
type Manifest struct {
	Created   time.Time `json:"created"`
	Collected []Member  `json:"collected"`
	Missing   []Missing `json:"missing"`
}

// Member is one collected member.
type Member struct {
	Name      string `json:"name"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"` // only the last ItemLimit bytes are kept
	Redacted  int    `json:"redacted,omitempty"`  // secrets scrubbed from it
}

// Missing is an item not collected, or collected in part, and why.
type Missing struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Write collects the items and writes the bundle to path (mode 0600), through a temporary file
// renamed at the end: a failed write leaves nothing behind.
func Write(ctx context.Context, path string, o Options) (Manifest, error) {
	m := Manifest{Created: time.Now().UTC(), Collected: []Member{}, Missing: []Missing{}}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return m, err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return m, err
	}
	gz := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gz)
	var total int64
	forms := secretForms(o.Secrets)
	for _, it := range o.Items {
		if total >= o.TotalLimit {
			m.Missing = append(m.Missing, Missing{it.Name, fmt.Sprintf("the bundle reached its size bound (%d bytes)", o.TotalLimit)})
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, o.ItemTimeout)
		data, err := it.Collect(ictx)
		cancel()
		if err != nil {
			m.Missing = append(m.Missing, Missing{it.Name, err.Error()})
		}
		if data == nil {
			continue
		}
		member := Member{Name: it.Name}
		data, member.Redacted = scrub(data, forms)
		limit := min(o.ItemLimit, o.TotalLimit-total)
		if int64(len(data)) > limit {
			data, member.Truncated = data[int64(len(data))-limit:], true
		}
		member.Bytes = len(data)
		if err := add(tw, it.Name, data, m.Created); err != nil {
			tmp.Close()
			return m, err
		}
		total += int64(len(data))
		m.Collected = append(m.Collected, member)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = add(tw, "manifest.json", append(manifest, '\n'), m.Created)
	}
	for _, closer := range []func() error{tw.Close, gz.Close, tmp.Sync, tmp.Close} {
		if err == nil {
			err = closer()
		}
	}
	if err != nil {
		tmp.Close()
		return m, err
	}
	return m, os.Rename(tmp.Name(), path)
}

// secretForms are the forms the secrets take in the files a bundle holds (as they are, and
// escaped for JSON, XML and URLs), longest first: a secret inside another must not leave the
// rest of the longer one behind. Made once a bundle, not once an item.
func secretForms(secrets [][]byte) [][]byte {
	var forms [][]byte
	for _, s := range secrets {
		if len(s) >= minSecret {
			forms = append(forms, escapedForms(s)...)
		}
	}
	slices.SortFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	return forms
}

// scrub replaces every form of a secret in data (secretForms), and counts the replacements. A
// secret cut by the start or the end of data (a log read from its last bytes, or written to as
// it was read) is replaced too, down to minSecret bytes of it.
func scrub(data []byte, forms [][]byte) ([]byte, int) {
	n := 0
	for _, f := range forms {
		if c := bytes.Count(data, f); c > 0 {
			n += c
			data = bytes.ReplaceAll(data, f, []byte(Redacted))
		}
	}
	for _, f := range forms {
		for k := len(f) - 1; k >= minSecret; k-- {
			if bytes.HasPrefix(data, f[len(f)-k:]) {
				data, n = append([]byte(Redacted), data[k:]...), n+1
				break
			}
		}
		for k := len(f) - 1; k >= minSecret; k-- {
			if bytes.HasSuffix(data, f[:k]) {
				data, n = append(data[:len(data)-k:len(data)-k], Redacted...), n+1
				break
			}
		}
	}
	return data, n
}

// escapedForms are s as it is and as JSON (with and without HTML escaping: Go's encoder and
// most others), XML and URLs escape it, each once.
func escapedForms(s []byte) [][]byte {
	var x bytes.Buffer
	_ = xml.EscapeText(&x, s)
	forms := [][]byte{s}
	for _, f := range [][]byte{jsonString(s, true), jsonString(s, false), x.Bytes(), []byte(url.QueryEscape(string(s))), []byte(url.PathEscape(string(s)))} {
		if !slices.ContainsFunc(forms, func(g []byte) bool { return bytes.Equal(f, g) }) {
			forms = append(forms, f)
		}
	}
	return forms
}

// jsonString is s as a JSON string's content, without its quotes.
func jsonString(s []byte, escapeHTML bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(string(s))
	return bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte(`"`)), []byte(`"`))
}

func add(tw *tar.Writer, name string, data []byte, at time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: at, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// Read returns a bundle's members by name, for whoever checks one.
func Read(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if out[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
}
