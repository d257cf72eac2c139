package etcdagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// Pacemaker runs one action of a resource at a time on a node, but peer-fenced runs outside
// Pacemaker (the fencing alert starts it), possibly while Pacemaker's post-stop notification or
// a monitor handles the same fencing. Every action that may change etcd takes this node's lock
// first, so one of them forces the cluster of one and the next finds it done.

// lock takes the agent's lock in state_dir, waiting while another action holds it, for as long
// as ctx allows. The returned function releases it (a process that dies releases it too).
func (a *Agent) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(a.cfg.StateDir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(a.cfg.StateDir, "agent.lock")
	unlock, err := fsutil.Lock(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("another action held %s until this one's deadline: %w", path, err)
	}
	return unlock, nil
}
