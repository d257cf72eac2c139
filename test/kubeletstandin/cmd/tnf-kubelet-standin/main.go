// Command tnf-kubelet-standin is kubeletstandin.Run, for a guest of the boot tests.
package main

import (
	"fmt"
	"os"

	"github.com/tnf-layer/tnf-layer/test/kubeletstandin"
)

func main() {
	if err := kubeletstandin.Run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
