// Command ocf-etcd is the ocf:tnf:etcd resource agent, installed on the nodes as
// /usr/lib/ocf/resource.d/tnf/etcd.
package main

import (
	"os"

	"github.com/tnf-layer/tnf-layer/internal/etcdagent"
	"github.com/tnf-layer/tnf-layer/internal/ocf"
)

func main() {
	os.Exit(int(etcdagent.Main(os.Args, ocf.OSEnv(), os.Stdout, os.Stderr)))
}
