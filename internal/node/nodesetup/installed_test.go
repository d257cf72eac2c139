package nodesetup

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestBootServices covers every input: a guest node or not, the node's etcd handed over or not,
// the installer's etcd in the static pod or not, and a manifest that cannot be read
// (staticpod.InstallerEtcd then says true, with the reason).
func TestBootServices(t *testing.T) {
	unreadable := errors.New("etcd-pod.yaml holds no pod with containers (being written?)")
	both, crio := []string{"crio.service", "kubelet.service"}, []string{"crio.service"}
	rows := []struct {
		guest, handedOver, installer bool
		err                          error
		start                        []string
		why                          string
	}{
		{false, false, true, nil, both, "runs the installer's etcd here"},
		{false, false, false, nil, nil, "no installer etcd"},
		{false, false, true, unreadable, nil, "cannot be told"},
		{false, false, false, unreadable, nil, "cannot be told"},
		{false, true, true, nil, nil, "was handed over"},
		{false, true, false, nil, nil, "was handed over"},
		{false, true, true, unreadable, nil, "was handed over"},
		{false, true, false, unreadable, nil, "was handed over"},
	}
	// A guest starts cri-o whatever else holds: the operator's configuration runs etcd.
	for _, r := range slices.Clone(rows) {
		r.guest, r.start, r.why = true, crio, "(guest)"
		rows = append(rows, r)
	}
	for _, c := range rows {
		start, why := BootServices(c.guest, c.handedOver, c.installer, c.err)
		if !slices.Equal(start, c.start) || !strings.Contains(why, c.why) {
			t.Errorf("BootServices(%v, %v, %v, %v) = %v, %q; want %v, %q", c.guest, c.handedOver, c.installer, c.err, start, why, c.start, c.why)
		}
	}
}
