// Command etcd is the upstream etcd server, built from go.etcd.io/etcd/server/v3 at the version
// OpenShift ships, so tests and the lab image run the same etcd the agent manages on a cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
