// Package version is the layer version the agents and the image carry. build-layer stamps it
// into the binaries it compiles (-X) and into the image's labels.
package version

import "reflect"

// Version is set at link time; "dev" for a plain go build.
var Version = "dev"

type marker struct{}

// LinkFlag is the -ldflags argument that stamps v into a binary. The linker ignores -X for a
// symbol that does not exist, so the package path is read, not written out: it follows the
// package wherever it moves.
func LinkFlag(v string) string {
	return "-X " + reflect.TypeFor[marker]().PkgPath() + ".Version=" + v
}
