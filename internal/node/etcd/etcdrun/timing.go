package etcdrun

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultElectionTimeout is etcd's own default, and the cluster-etcd-operator's for standard
// hardware (its "Slower" hardware speed sets 2500 ms).
const DefaultElectionTimeout = 1000 * time.Millisecond

// ElectionTimeout is the election timeout an etcd started with args (its flags) and env (its
// environment, NAME=VALUE) runs with: --election-timeout, else ETCD_ELECTION_TIMEOUT, else
// etcd's default. etcd refuses to start with both set, and with a value that is not a whole
// number of milliseconds: so does this.
func ElectionTimeout(args, env []string) (time.Duration, error) {
	value, from := "", ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "ETCD_ELECTION_TIMEOUT="); ok {
			value, from = v, "ETCD_ELECTION_TIMEOUT"
		}
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--election-timeout="); ok {
			if from == "ETCD_ELECTION_TIMEOUT" {
				return 0, fmt.Errorf("--election-timeout and ETCD_ELECTION_TIMEOUT are both set")
			}
			value, from = v, "--election-timeout"
		}
	}
	if from == "" {
		return DefaultElectionTimeout, nil
	}
	ms, err := strconv.ParseUint(value, 10, 32)
	if err != nil || ms == 0 {
		return 0, fmt.Errorf("%s=%q: want a positive whole number of milliseconds", from, value)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
