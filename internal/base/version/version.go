// Package version is the layer version the agents and the image carry. build-layer stamps it
// into the binaries it compiles (-X) and into the image's labels.
package version

import "reflect"

// Version is set at link time; "dev" for a plain go build.
var Version = "dev"

// Release is the OpenShift release the layer's operating system was built on, set at link time
// by build-layer ("4.19.7"; the minor release when the payload named none; "" for a layer
// without a release, such as the lab's).
var Release = ""

type marker struct{}

// LinkFlag is the -ldflags argument that stamps v into a binary. The linker ignores -X for a
// symbol that does not exist, so the package path is read, not written out: it follows the
// package wherever it moves.
func LinkFlag(v string) string { return setFlag("Version", v) }

// Describe is the version as the agents print it: the layer version, and the OpenShift release
// its operating system was built on when known.
func Describe() string {
	if Release == "" {
		return Version
	}
	return Version + " (operating system of OpenShift " + Release + ")"
}

// LinkFlags stamps the layer version v and the release (none when empty).
func LinkFlags(v, release string) string {
	if release == "" {
		return LinkFlag(v)
	}
	return LinkFlag(v) + " " + setFlag("Release", release)
}

// setFlag is the -X argument that sets this package's variable name to value.
func setFlag(name, value string) string {
	return "-X " + reflect.TypeFor[marker]().PkgPath() + "." + name + "=" + value
}
