package fenceagent

import (
	"encoding/xml"
	"fmt"
)

// The metadata in the fence agents' format (what `fence_redfish -o metadata` prints), which
// Pacemaker's fencer and pcs read: the parameters a device may set, and the actions.

type mdContent struct {
	Type    string `xml:"type,attr"`
	Default string `xml:"default,attr,omitempty"`
}

type mdText struct {
	Lang string `xml:"lang,attr"`
	Text string `xml:",chardata"`
}

type mdGetopt struct {
	Mixed string `xml:"mixed,attr"`
}

type mdParameter struct {
	Name      string    `xml:"name,attr"`
	Unique    string    `xml:"unique,attr"`
	Required  string    `xml:"required,attr"`
	Getopt    mdGetopt  `xml:"getopt"`
	Content   mdContent `xml:"content"`
	Shortdesc mdText    `xml:"shortdesc"`
}

type mdAction struct {
	Name      string `xml:"name,attr"`
	Automatic string `xml:"automatic,attr,omitempty"`
}

type metadata struct {
	XMLName    xml.Name      `xml:"resource-agent"`
	Name       string        `xml:"name,attr"`
	Shortdesc  string        `xml:"shortdesc,attr"`
	Longdesc   string        `xml:"longdesc"`
	VendorURL  string        `xml:"vendor-url"`
	Parameters []mdParameter `xml:"parameters>parameter"`
	Actions    []mdAction    `xml:"actions>action"`
}

func param(name string, required bool, typ, def, desc string) mdParameter {
	req := "0"
	if required {
		req = "1"
	}
	return mdParameter{Name: name, Unique: "0", Required: req, Getopt: mdGetopt{Mixed: "--" + name + "=[value]"},
		Content: mdContent{Type: typ, Default: def}, Shortdesc: mdText{Lang: "en", Text: desc}}
}

// Metadata is the agent's metadata document.
func (a Agent) Metadata() ([]byte, error) {
	md := metadata{
		Name:      a.Name,
		Shortdesc: a.shortdesc,
		Longdesc: a.longdesc + " Options come on standard input, as Pacemaker's fencer passes them; the password " +
			"never on the command line.",
		VendorURL: "https://www.dmtf.org/standards/redfish",
		Parameters: []mdParameter{
			param("action", true, "string", "reboot", "Fencing action"),
			param("ip", true, "string", "", "IP address or hostname of the BMC"),
			param("ipport", false, "integer", "443", "TCP port of the BMC's HTTPS service"),
			param("username", true, "string", "", "BMC login name"),
			param("password", true, "string", "", "BMC login password"),
			param("systems_uri", true, "string", "", "Redfish ComputerSystem of the target, /redfish/v1/Systems/<id>"),
			param("ssl_insecure", false, "boolean", "", "Do not verify the BMC's certificate against a CA (a pin still checks it)"),
			param("ssl_ca_file", false, "string", "", "CA bundle that signs the BMC's certificate (default: the system's)"),
			param("ssl_fingerprint", false, "string", "", "SHA-256 of the BMC's certificate: only that certificate is accepted"),
			param("insecure_skip_certificate_check", false, "boolean", "",
				"Talk to a BMC whose certificate is neither verified nor pinned, and take its word: whoever answers at its address gets the password"),
		},
	}
	for _, t := range a.timings {
		md.Parameters = append(md.Parameters, param(t.name, false, "second", fmt.Sprint(t.def.Seconds()), t.desc))
	}
	md.Parameters[0].Getopt.Mixed = "-o, --action=[action]"
	for _, action := range Actions {
		md.Actions = append(md.Actions, mdAction{Name: action})
	}
	out, err := xml.MarshalIndent(md, "", "\t")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
