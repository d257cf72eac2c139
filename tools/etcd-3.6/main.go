// Command etcd is the upstream etcd server at 3.6, the version newer OpenShift releases ship,
// built from go.etcd.io/etcd/server/v3 in a module of its own so that it does not move the
// project's etcd (cmd/etcd, 3.5). The agent's integration tests run against both.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
