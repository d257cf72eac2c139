// Command fence_tnf_redfish is the second fencing level (internal/node/fencing/fenceagent), installed as
// /usr/sbin/fence_tnf_redfish, where Pacemaker's fencer and pcs look for fence agents.
package main

import (
	"context"
	"os"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fenceagent"
)

func main() {
	os.Exit(fenceagent.Redfish.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
