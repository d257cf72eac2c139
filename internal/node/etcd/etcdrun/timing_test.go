package etcdrun

import (
	"strings"
	"testing"
	"time"
)

func TestElectionTimeout(t *testing.T) {
	for _, c := range []struct {
		name      string
		args, env []string
		want      time.Duration
		err       string
	}{
		{name: "etcd's default", args: []string{"--name=a"}, env: []string{"PATH=/usr/bin"}, want: time.Second},
		{name: "the operator's environment", env: []string{"ETCD_HEARTBEAT_INTERVAL=500", "ETCD_ELECTION_TIMEOUT=2500"}, want: 2500 * time.Millisecond},
		{name: "a flag", args: []string{"--election-timeout=1500", "--heartbeat-interval=150"}, want: 1500 * time.Millisecond},
		{name: "a flag given twice: the last", args: []string{"--election-timeout=1500", "--election-timeout=3000"}, want: 3 * time.Second},
		{name: "both", args: []string{"--election-timeout=1500"}, env: []string{"ETCD_ELECTION_TIMEOUT=2500"}, err: "both set"},
		{name: "not a number", env: []string{"ETCD_ELECTION_TIMEOUT=1s"}, err: `ETCD_ELECTION_TIMEOUT="1s"`},
		{name: "zero", args: []string{"--election-timeout=0"}, err: `--election-timeout="0"`},
		{name: "negative", args: []string{"--election-timeout=-5"}, err: `--election-timeout="-5"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ElectionTimeout(c.args, c.env)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("= %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
