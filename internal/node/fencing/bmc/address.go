// Package bmc talks to a node's Redfish BMC with gofish: the installer's fencing address format,
// certificate verification, power state and reset, all with deadlines.
package bmc

import (
	"errors"
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

// MaxPassword is the longest password Pacemaker's cibsecret support reads back whole: it reads
// a secret's file with fgets into 255 bytes (lib/common/cib_secrets.c, MAX_VALUE_LEN), so 254
// characters at most.
const MaxPassword = 254

// CheckPassword refuses a password that the fence devices would not get as it is: Pacemaker
// reads a secret's first line only, cuts its trailing white space and compares its checksum
// with the whole value's, and a device whose secret does not match counts as unconfigured, while
// every check that passes the password directly (fence-check, setup's) goes on passing.
func CheckPassword(pw string) error {
	switch {
	case pw == "":
		return errors.New("empty")
	case len(pw) > MaxPassword:
		return fmt.Errorf("%d bytes: Pacemaker reads %d at most, and a fence device with a longer one has none", len(pw), MaxPassword)
	case strings.ContainsAny(pw, "\n\r\x00"):
		return errors.New("holds a line break or a NUL: Pacemaker reads the first line only")
	case strings.TrimRight(pw, " \t\v\f") != pw:
		return errors.New("ends in white space, which Pacemaker cuts off")
	}
	return nil
}
