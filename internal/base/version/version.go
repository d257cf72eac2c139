// Package version is the layer version the agents and the image carry. build-layer stamps it
// into the binaries it compiles (-X) and into the image's labels.
package version

// Version is set at link time; "dev" for a plain go build.
var Version = "dev"

// LinkFlag is the -ldflags argument that stamps v into a binary.
func LinkFlag(v string) string {
	return "-X github.com/tnf-layer/tnf-layer/internal/version.Version=" + v
}
