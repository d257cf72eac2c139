// Command fence_tnf_poweroff is the first fencing level (internal/node/fencing/fenceagent), installed as
// /usr/sbin/fence_tnf_poweroff, where Pacemaker's fencer and pcs look for fence agents.
package main

import (
	"context"
	"os"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fenceagent"
)

func main() {
	os.Exit(fenceagent.PowerOff.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
