package fsutil

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/poll"
)

// Lock takes an exclusive lock on the file at path (made 0600 if missing), waiting while another
// process holds it, for as long as ctx allows. The returned function releases it; a process that
// dies releases it too. The file is opened close-on-exec: a child never inherits the lock.
func Lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	err = poll.Every(ctx, 20*time.Millisecond, func(context.Context) (bool, error) {
		return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil, nil
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
