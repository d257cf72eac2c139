// Command tnf-fencing-alert is the Pacemaker alert agent that hands every successful fencing of
// the other node to this node's etcd agent (internal/node/fencing/fencealert), installed as
// /usr/libexec/tnf/tnf-fencing-alert. Pacemaker runs it for every alert as the hacluster user,
// with the event in CRM_alert_* variables; it exits 0 whatever happens (an alert agent's failure
// only makes Pacemaker log it), and says on standard error what it did.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencealert"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func main() {
	ev := fencealert.FromEnv(os.Getenv)
	if ev.Kind != "fencing" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := pcmk.Tools{}.Run(ctx, "crm_node", "--name")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tnf-fencing-alert: this node's name: %v\n", err)
		return
	}
	self := strings.TrimSpace(out)
	if ok, why := fencealert.Relevant(ev, self); !ok {
		fmt.Fprintf(os.Stderr, "tnf-fencing-alert: ignored: %s\n", why)
		return
	}
	if err := fencealert.Send(ctx, fencealert.DefaultSocket, ev.Target); err != nil {
		fmt.Fprintf(os.Stderr, "tnf-fencing-alert: %s fenced: %v\n", ev.Target, err)
		return
	}
	fmt.Fprintf(os.Stderr, "tnf-fencing-alert: %s fenced: handed to the etcd agent\n", ev.Target)
}
