// Package kubeconfig makes the node's API clients from a kubeconfig file, each request bounded:
// a client without a timeout waits for ever on an API that accepted its connection and then
// stalled (an API server whose etcd lost its quorum does), and the unit's next pass never comes.
package kubeconfig

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultTimeout bounds each request of a client whose caller names no other bound.
const DefaultTimeout = 10 * time.Second

// Load reads the kubeconfig at path; every request of its clients is bounded by timeout
// (DefaultTimeout when zero) and names userAgent.
func Load(path, userAgent string, timeout time.Duration) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	cfg.Timeout, cfg.UserAgent = timeout, userAgent
	return cfg, nil
}
