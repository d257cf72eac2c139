package nodesetup

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWaitForEndsAHungLook: a look that never returns by itself (a tool that hangs) ends with
// the wait's deadline, and the wait says what it gave up on.
func TestWaitForEndsAHungLook(t *testing.T) {
	err := waitFor(context.Background(), 50*time.Millisecond, "Corosync to answer", func(ctx context.Context) (bool, error) {
		<-ctx.Done()
		return false, nil
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for Corosync to answer") {
		t.Fatalf("err = %v, want the wait given up", err)
	}
}
