package bootdisk

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// image is a root with the users and groups ApplyIgnition resolves names against.
func image(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nhacluster:x:106:111::/var/lib/heartbeat:/usr/sbin/nologin\n",
		"etc/group":  "root:x:0:\nhaclient:x:111:\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func owner(t *testing.T, p string) (mode os.FileMode, uid, gid uint32) {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	return st.Mode().Perm(), sys.Uid, sys.Gid
}

func TestApplyIgnition(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("compressed content\n"))
	zw.Close()
	gzURL := "data:;base64," + base64.StdEncoding.EncodeToString(gz.Bytes())
	sum := sha512.Sum512(gz.Bytes())
	root := image(t)
	cfg := `{"ignition":{"version":"3.5.0"},"storage":{
	  "directories":[{"path":"/etc/tnf/secrets","mode":448}],
	  "files":[
	    {"path":"/etc/tnf/cluster.yaml","mode":420,"contents":{"source":"data:,clusterName%3A%20lab%0A"}},
	    {"path":"/etc/tnf/secrets/node1.password","mode":384,"user":{"name":"hacluster"},"group":{"name":"haclient"},"contents":{"source":"data:,pw"}},
	    {"path":"/var/lib/x/z.gz","contents":{"compression":"gzip","source":"` + gzURL + `","verification":{"hash":"sha512-` + hex.EncodeToString(sum[:]) + `"}}}
	  ],
	  "links":[{"path":"/etc/tnf/current","target":"cluster.yaml"}]}}`
	if err := ApplyIgnition([]byte(cfg), root, "mc.yaml"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path     string
		content  string
		mode     os.FileMode
		uid, gid uint32
	}{
		{"etc/tnf/cluster.yaml", "clusterName: lab\n", 0o644, 0, 0},
		{"etc/tnf/secrets/node1.password", "pw", 0o600, 106, 111},
		{"etc/tnf/secrets", "", 0o700, 0, 0},
		{"var/lib/x", "", 0o755, 0, 0},
		{"var/lib/x/z.gz", "compressed content\n", 0o644, 0, 0},
	} {
		p := filepath.Join(root, c.path)
		mode, uid, gid := owner(t, p)
		if mode != c.mode || uid != c.uid || gid != c.gid {
			t.Errorf("%s: mode %o owner %d:%d, want %o %d:%d", c.path, mode, uid, gid, c.mode, c.uid, c.gid)
		}
		if c.content != "" {
			if b, _ := os.ReadFile(p); string(b) != c.content {
				t.Errorf("%s: %q, want %q", c.path, b, c.content)
			}
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "etc/tnf/current")); err != nil || target != "cluster.yaml" {
		t.Errorf("link: %q %v", target, err)
	}
}

func TestApplyIgnitionRefuses(t *testing.T) {
	for _, c := range []struct{ name, storage, want string }{
		{"remote source", `"files":[{"path":"/a","contents":{"source":"https://example.com/a"}}]`, "storage.files[0] (/a): contents: source: a https: URL is not fetched offline"},
		{"existing file", `"files":[{"path":"/etc/passwd","contents":{"source":"data:,x"}}]`, "storage.files[0] (/etc/passwd): a file exists there and overwrite is not set"},
		{"bad hash", `"files":[{"path":"/a","contents":{"source":"data:,x","verification":{"hash":"sha512-` + strings.Repeat("0", 128) + `"}}}]`, "storage.files[0] (/a): contents: verification.hash: content has sha512-"},
		{"unknown user", `"files":[{"path":"/a","user":{"name":"nobody"},"contents":{"source":"data:,x"}}]`, `storage.files[0] (/a): user.name: "nobody" is not in the image`},
		{"append", `"files":[{"path":"/a","append":[{"source":"data:,x"}]}]`, "storage.files[0] (/a): append: not applied offline"},
		{"units", `"files":[]},"systemd":{"units":[{"name":"a.service"}]`, "mc.yaml: systemd.units: units are not applied offline"},
	} {
		root := image(t)
		err := ApplyIgnition([]byte(`{"ignition":{"version":"3.5.0"},"storage":{`+c.storage+`}}`), root, "mc.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "mc.yaml: ") {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(root, "a")); err == nil {
			t.Errorf("%s: /a was written", c.name)
		}
	}
}
