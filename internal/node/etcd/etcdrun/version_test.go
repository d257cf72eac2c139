package etcdrun

import "testing"

func TestParseVersion(t *testing.T) {
	for out, want := range map[string]string{
		"etcd Version: 3.5.21\nGit SHA: GitNotFound\nGo Version: go1.26.8\nGo OS/Arch: linux/amd64\n": "3.5.21",
		"etcd Version: 3.6.5\nGit SHA: GitNotFound\nGo Version: go1.26.8\n":                           "3.6.5",
		"":                    "",
		"etcd Version:\n":     "",
		"unknown flag: --v\n": "",
	} {
		got, err := ParseVersion(out)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
}
