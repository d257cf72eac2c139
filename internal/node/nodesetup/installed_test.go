package nodesetup

import (
	"errors"
	"strings"
	"testing"
)

// TestInstallerKubelet covers every input: setup done or not, the installer's etcd in the static
// pod or not, and a manifest that cannot be read.
func TestInstallerKubelet(t *testing.T) {
	unreadable := errors.New("etcd-pod.yaml holds no pod with containers (being written?)")
	for _, c := range []struct {
		setupDone, installer bool
		err                  error
		start                bool
		why                  string
	}{
		{false, true, nil, true, "the installer's etcd runs here"},
		{false, false, nil, false, "no installer etcd"},
		{false, true, unreadable, false, "cannot be told"},
		{false, false, unreadable, false, "cannot be told"},
		{true, true, nil, false, "setup has completed"},
		{true, false, nil, false, "setup has completed"},
		{true, true, unreadable, false, "setup has completed"},
		{true, false, unreadable, false, "setup has completed"},
	} {
		start, why := InstallerKubelet(c.setupDone, c.installer, c.err)
		if start != c.start || !strings.Contains(why, c.why) {
			t.Errorf("InstallerKubelet(setup done %v, installer %v, %v) = %v, %q; want %v, %q", c.setupDone, c.installer, c.err, start, why, c.start, c.why)
		}
	}
}
