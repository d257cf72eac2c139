package nodesetup

import (
	"errors"
	"strings"
	"testing"
)

// TestInstallerKubelet covers every input: the installer's etcd in the static pod or not, and a
// manifest that cannot be read (staticpod.InstallerEtcd then says true, with the reason).
func TestInstallerKubelet(t *testing.T) {
	unreadable := errors.New("etcd-pod.yaml holds no pod with containers (being written?)")
	for _, c := range []struct {
		installer bool
		err       error
		start     bool
		why       string
	}{
		{true, nil, true, "runs the installer's etcd here"},
		{false, nil, false, "no installer etcd"},
		{true, unreadable, false, "cannot be told"},
		{false, unreadable, false, "cannot be told"},
	} {
		start, why := InstallerKubelet(c.installer, c.err)
		if start != c.start || !strings.Contains(why, c.why) {
			t.Errorf("InstallerKubelet(%v, %v) = %v, %q; want %v, %q", c.installer, c.err, start, why, c.start, c.why)
		}
	}
}
