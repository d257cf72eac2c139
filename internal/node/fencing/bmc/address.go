// Package bmc talks to a node's Redfish BMC with gofish: the installer's fencing address format,
// certificate verification, power state and reset, all with deadlines.
package bmc

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Address is a parsed fencing address: redfish+https://host:port/redfish/v1/Systems/<id>, or
// one of the vendor forms the installer takes from the bare-metal hosts (redfishDrivers).
type Address struct {
	Scheme     string // https or http
	Host       string // IP or name, without brackets
	Port       int
	SystemPath string // /redfish/v1/Systems/<id>
	SystemID   string
}

const systemsPrefix = "/redfish/v1/Systems/"

// redfishDrivers are the address schemes of metal3's bare-metal hosts (and so of the installer)
// that name a Redfish service: each is "<driver>", "<driver>+https" or "<driver>+http", and
// without a suffix the service speaks https. The vendor drivers differ in how Ironic boots
// and configures the host; for power, which is all fencing does, each is the same Redfish
// ComputerSystem. Schemes of other protocols (ipmi, the iLO 4/5 and iRMC drivers) are refused.
var redfishDrivers = []string{"redfish", "redfish-virtualmedia", "idrac-redfish", "idrac-virtualmedia", "ilo5-redfish", "ilo5-virtualmedia"}

// ParseAddress parses the installer's address format. field names the field in errors (for
// example "controlPlane.fencing.credentials[0].address").
func ParseAddress(field, s string) (Address, error) {
	bad := func(why string) (Address, error) {
		return Address{}, fmt.Errorf("%s: %q: %s (want redfish+https://host[:port]%s<id>)", field, s, why, systemsPrefix)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad(err.Error())
	}
	var a Address
	driver, transport, _ := strings.Cut(u.Scheme, "+")
	switch {
	case !slices.Contains(redfishDrivers, driver):
		return bad("scheme must name a Redfish driver (" + strings.Join(redfishDrivers, ", ") + "), optionally +https or +http")
	case transport == "https" || transport == "":
		a.Scheme, a.Port = "https", 443
	case transport == "http":
		a.Scheme, a.Port = "http", 80
	default:
		return bad("scheme must end in +https or +http, or name no transport (https)")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return bad("no user info, query or fragment allowed")
	}
	a.Host = u.Hostname()
	if a.Host == "" {
		return bad("no host")
	}
	if strings.Contains(a.Host, ":") && net.ParseIP(a.Host) == nil {
		return bad("invalid IPv6 address")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("port out of range")
		}
		a.Port = n
	}
	id, ok := strings.CutPrefix(u.Path, systemsPrefix)
	if !ok || id == "" || strings.Contains(strings.TrimSuffix(id, "/"), "/") {
		return bad("path must be " + systemsPrefix + "<id>")
	}
	a.SystemID = strings.TrimSuffix(id, "/")
	a.SystemPath = systemsPrefix + a.SystemID
	return a, nil
}

// Endpoint is the service's base URL.
func (a Address) Endpoint() string {
	return a.Scheme + "://" + net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}
