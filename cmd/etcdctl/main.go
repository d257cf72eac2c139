// Command etcdctl is the upstream etcdctl (API v3 only), built at the same version as bin/etcd.
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() {
	ctlv3.MustStart()
}
