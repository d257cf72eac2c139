// Command ocf-etcd is the entry point of the ocf:tnf:etcd resource agent, installed on the nodes
// as /usr/lib/ocf/resource.d/tnf/etcd. It answers the monitor of a healthy voter by itself;
// every other action, and every monitor it cannot answer, it hands to tnf-etcd-agent by
// exec. It links no etcd or gRPC package, which is what makes it start in about a millisecond
// instead of ten (the monitor runs every 10 s on both nodes, forever).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/fastmonitor"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

const (
	fullAgent   = "tnf-etcd-agent"
	installedAt = "/usr/libexec/tnf/" + fullAgent
)

// fullAgentPath prefers the binary next to this one (a build tree), then the installed one.
func fullAgentPath() string {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), fullAgent); isFile(p) {
			return p
		}
	}
	return installedAt
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "monitor" {
		if st, handled := fastmonitor.Run(ocf.OSEnv(), os.Stderr); handled {
			os.Exit(int(st))
		}
	}
	path := fullAgentPath()
	err := syscall.Exec(path, append([]string{path}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "ocf:tnf:etcd: cannot run %s: %v\n", path, err)
	os.Exit(int(ocf.ErrInstalled))
}
