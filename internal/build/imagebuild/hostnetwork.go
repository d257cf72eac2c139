package imagebuild

import (
	"errors"

	nettypes "github.com/containers/common/libnetwork/types"
)

// hostNetwork is the network interface buildah is given so that it does not look for a CNI or
// netavark backend: every RUN step here uses the host's network namespace, so no container
// network is ever set up, and any attempt to set one up is an error.
type hostNetwork struct{}

var errHostOnly = errors.New("the build uses the host network; container networks are not available")

func (hostNetwork) NetworkCreate(nettypes.Network, *nettypes.NetworkCreateOptions) (nettypes.Network, error) {
	return nettypes.Network{}, errHostOnly
}
func (hostNetwork) NetworkUpdate(string, nettypes.NetworkUpdateOptions) error { return errHostOnly }
func (hostNetwork) NetworkRemove(string) error                                { return errHostOnly }
func (hostNetwork) NetworkList(...nettypes.FilterFunc) ([]nettypes.Network, error) {
	return nil, nil
}
func (hostNetwork) NetworkInspect(string) (nettypes.Network, error) {
	return nettypes.Network{}, errHostOnly
}
func (hostNetwork) Setup(string, nettypes.SetupOptions) (map[string]nettypes.StatusBlock, error) {
	return nil, errHostOnly
}
func (hostNetwork) Teardown(string, nettypes.TeardownOptions) error { return nil }
func (hostNetwork) RunInRootlessNetns(func() error) error           { return errHostOnly }
func (hostNetwork) RootlessNetnsInfo() (*nettypes.RootlessNetnsInfo, error) {
	return nil, errHostOnly
}
func (hostNetwork) Drivers() []string                 { return nil }
func (hostNetwork) DefaultNetworkName() string        { return "host" }
func (hostNetwork) NetworkInfo() nettypes.NetworkInfo { return nettypes.NetworkInfo{Backend: "host"} }
