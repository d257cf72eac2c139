// Package kubeconfig makes the node's API clients from a kubeconfig file, each request bounded:
// a client without a timeout waits for ever on an API that accepted its connection and then
// stalled (an API server whose etcd lost its quorum does), and the unit's next pass never comes.
package kubeconfig

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultTimeout bounds each request of a client whose caller names no other bound.
const DefaultTimeout = 10 * time.Second

// Load reads the kubeconfig at path; every request of its clients is bounded by timeout
// (DefaultTimeout when zero) and names userAgent. A kubeconfig anyone but root may read or
// write is refused: it is a credential of the cluster's (the node's may read both BMC
// passwords), and the services that use it run as root.
func Load(path, userAgent string, timeout time.Duration) (*rest.Config, error) {
	if err := CheckPrivate(path); err != nil {
		return nil, err
	}
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

// CheckPrivate refuses a file not owned by root, or that its group or others may use.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("kubeconfig %s: mode %04o lets others than its owner read it; it holds a credential: chmod 600 %s", path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
		return fmt.Errorf("kubeconfig %s: owned by uid %d, not root; it holds a credential: chown root: %s", path, st.Uid, path)
	}
	return nil
}
