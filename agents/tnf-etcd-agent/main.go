// Command tnf-etcd-agent carries out every action of the ocf:tnf:etcd resource agent. Pacemaker
// runs the entry point, /usr/lib/ocf/resource.d/tnf/etcd (agents/ocf-etcd), which answers the
// common monitor itself and hands everything else to this binary, installed as
// /usr/libexec/tnf/tnf-etcd-agent.
package main

import (
	"os"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdagent"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

func main() {
	os.Exit(int(etcdagent.Main(os.Args, ocf.OSEnv(), os.Stdout, os.Stderr)))
}
