package etcdnode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/base/version"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/decision"
	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/attrs"
)

func TestParseNodeIPMap(t *testing.T) {
	rows := []struct {
		in, self             string
		peer, selfIP, peerIP string
		err                  string
	}{
		{in: "node1:192.0.2.1;node2:192.0.2.2", self: "node1", peer: "node2", selfIP: "192.0.2.1", peerIP: "192.0.2.2"},
		{in: " node1:192.0.2.1 ; node2:192.0.2.2 ;", self: "node2", peer: "node1", selfIP: "192.0.2.2", peerIP: "192.0.2.1"},
		{in: "a:fd00::1;b:[fd00::2]", self: "a", peer: "b", selfIP: "fd00::1", peerIP: "fd00::2"},
		{in: "a:fd00:0::1;b:fd00::2", self: "b", peer: "a", selfIP: "fd00::2", peerIP: "fd00::1"},
		{in: "", self: "a", err: "exactly two"},
		{in: "a:192.0.2.1", self: "a", err: "exactly two"},
		{in: "a:192.0.2.1;b:192.0.2.2;c:192.0.2.3", self: "a", err: "exactly two"},
		{in: "a:192.0.2.1;a:192.0.2.2", self: "a", err: "twice"},
		{in: "a:192.0.2.1;b:host.example", self: "a", err: "not name:ip"},
		{in: "a192.0.2.1;b:192.0.2.2", self: "a", err: "not name:ip"},
		{in: "a:192.0.2.1;b:192.0.2.2", self: "c", err: "not listed"},
		{in: "a:192.0.2.1;b:192.0.2.1", self: "a", err: "both nodes"},
	}
	for _, r := range rows {
		peer, selfIP, peerIP, err := parseNodeIPMap(r.in, r.self)
		if r.err != "" {
			if err == nil || !strings.Contains(err.Error(), r.err) || !strings.Contains(err.Error(), "node_ip_map") {
				t.Errorf("%q: error %v, want one naming node_ip_map with %q", r.in, err, r.err)
			}
			continue
		}
		if err != nil || peer != r.peer || selfIP != r.selfIP || peerIP != r.peerIP {
			t.Errorf("%q as %s: %s %s %s %v", r.in, r.self, peer, selfIP, peerIP, err)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, d := range []decision.Data{
		{Known: true},
		{Known: true, Present: true, ClusterID: 0xaafd4929ddc3b8fd, Index: 12345},
		{Known: true, Present: true, ClusterID: 1, Index: 0, Learner: true},
	} {
		got, err := ParseRecord(Record(d))
		if err != nil || got != d {
			t.Errorf("%+v → %q → %+v, %v", d, Record(d), got, err)
		}
	}
	for _, bad := range []string{"", "x", "zz:1", "1:x", "1:2:voter", "1:2:3:4"} {
		if _, err := ParseRecord(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRecordsAcrossVersions: during a rolling update one node's agent is a version ahead. What
// this version publishes is read by the previous one (the data record keeps its format, the term
// and the layer version are attributes of their own, which it ignores), and what the previous
// one published (no layer version) is read by this one.
func TestRecordsAcrossVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := attrs.File{Path: filepath.Join(dir, "attrs.json")}
	c := Config{Self: "n1", StateDir: filepath.Join(dir, "state")}
	d := decision.Data{Known: true, Present: true, ClusterID: 0x1f, Index: 42, Term: 7, Commit: 40}
	if err := c.Publish(ctx, store, d); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRecord(ctx, store, "n1"); err != nil || got != d {
		t.Fatalf("read back: %+v %v, want %+v", got, err, d)
	}
	for name, want := range map[string]string{AttrData: "1f:42", AttrTerm: "7", AttrCommit: "42:40"} {
		if v, ok, err := store.Get(ctx, "n1", name, attrs.Forever); err != nil || !ok || v != want {
			t.Errorf("%s: %q %v %v, want %q (the format earlier agents read)", name, v, ok, err, want)
		}
	}
	if v, ok, err := store.Get(ctx, "n1", AttrLayerVersion, attrs.Reboot); err != nil || !ok || v != version.Version {
		t.Errorf("%s: %q %v %v, want %q", AttrLayerVersion, v, ok, err, version.Version)
	}
	// The previous version's node: a record and a term, no layer version.
	for name, v := range map[string]string{AttrData: "1f:40", AttrTerm: "7"} {
		if err := store.Set(ctx, "n2", name, v, attrs.Forever); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadRecord(ctx, store, "n2")
	if want := (decision.Data{Known: true, Present: true, ClusterID: 0x1f, Index: 40, Term: 7}); err != nil || got != want {
		t.Fatalf("the previous version's record: %+v %v, want %+v", got, err, want)
	}
	// A commit index left by another record (an earlier agent writes none after it) is not this
	// record's.
	if err := store.Set(ctx, "n2", AttrCommit, "38:36", attrs.Forever); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRecord(ctx, store, "n2"); err != nil || got.Commit != 0 {
		t.Fatalf("a commit index of another record read as this one's: %+v %v", got, err)
	}
	for _, bad := range []string{"40", "40:x", "40:41"} {
		if err := store.Set(ctx, "n2", AttrCommit, bad, attrs.Forever); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRecord(ctx, store, "n2"); err == nil || !strings.Contains(err.Error(), AttrCommit) {
			t.Errorf("%s %q: %v, want an error naming it", AttrCommit, bad, err)
		}
	}
}

// TestCheckPlaintext: etcd without certificates only on loopback, or with the test setting.
func TestCheckPlaintext(t *testing.T) {
	tls := &etcdrun.TLS{CertFile: "c", KeyFile: "k", TrustedCAFile: "ca"}
	for _, tc := range []struct {
		c       Config
		refused bool
	}{
		{Config{SelfIP: "192.0.2.1"}, true},
		{Config{SelfIP: "fd00::1"}, true},
		{Config{SelfIP: "192.0.2.1", TLS: tls}, false},
		{Config{SelfIP: "127.0.3.1"}, false},
		{Config{SelfIP: "::1"}, false},
		{Config{SelfIP: "127.0.3.1", Runtime: "exec"}, false},
		{Config{SelfIP: "127.0.3.1", Runtime: "podman"}, true},
		{Config{SelfIP: "::1", Runtime: "podman"}, true},
		{Config{SelfIP: "127.0.3.1", Runtime: "podman", InsecurePlaintext: true}, false},
		{Config{SelfIP: "192.0.2.1", InsecurePlaintext: true}, false},
	} {
		if err := tc.c.CheckPlaintext(); (err != nil) != tc.refused || (err != nil && !strings.Contains(err.Error(), "cert_file")) {
			t.Errorf("%s (TLS %v, insecure_plaintext %v): %v", tc.c.SelfIP, tc.c.TLS != nil, tc.c.InsecurePlaintext, err)
		}
	}
}
