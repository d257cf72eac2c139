package nodesetup

import (
	"errors"
	"strings"
	"testing"
)

// TestInstallerKubelet covers every input: the node's etcd handed over or not, the installer's
// etcd in the static pod or not, and a manifest that cannot be read (staticpod.InstallerEtcd then
// says true, with the reason).
func TestInstallerKubelet(t *testing.T) {
	unreadable := errors.New("etcd-pod.yaml holds no pod with containers (being written?)")
	for _, c := range []struct {
		handedOver, installer bool
		err                   error
		start                 bool
		why                   string
	}{
		{false, true, nil, true, "runs the installer's etcd here"},
		{false, false, nil, false, "no installer etcd"},
		{false, true, unreadable, false, "cannot be told"},
		{false, false, unreadable, false, "cannot be told"},
		{true, true, nil, false, "was handed over"},
		{true, false, nil, false, "was handed over"},
		{true, true, unreadable, false, "was handed over"},
		{true, false, unreadable, false, "was handed over"},
	} {
		start, why := InstallerKubelet(c.handedOver, c.installer, c.err)
		if start != c.start || !strings.Contains(why, c.why) {
			t.Errorf("InstallerKubelet(%v, %v, %v) = %v, %q; want %v, %q", c.handedOver, c.installer, c.err, start, why, c.start, c.why)
		}
	}
}
