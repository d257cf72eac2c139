// Package bmc talks to a node's Redfish BMC with gofish: the installer's fencing address format,
// certificate verification, power state and reset, all with deadlines.
package bmc

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Address is a parsed fencing address: redfish+https://host:port/redfish/v1/Systems/<id>.
type Address struct {
	Scheme     string // https or http
	Host       string // IP or name, without brackets
	Port       int
	SystemPath string // /redfish/v1/Systems/<id>
	SystemID   string
}

const systemsPrefix = "/redfish/v1/Systems/"

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
	switch u.Scheme {
	case "redfish+https":
		a.Scheme, a.Port = "https", 443
	case "redfish+http":
		a.Scheme, a.Port = "http", 80
	default:
		return bad("scheme must be redfish+https or redfish+http")
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
