package ocf

import (
	"encoding/xml"
	"strconv"
	"time"
)

// Parameter describes one resource parameter in the meta-data.
type Parameter struct {
	Name      string
	Required  bool
	Unique    bool
	Type      string // string, integer, boolean
	Default   string
	Shortdesc string
	Longdesc  string
	// Reloadable: the agent takes a new value through its reload-agent action (OCF 1.1), so a
	// change of it alone does not make Pacemaker restart the resource.
	Reloadable bool
}

// Action is one advertised action with its default timeout (and interval for monitors).
type Action struct {
	Name     string
	Timeout  time.Duration
	Interval time.Duration
	Role     string
	Depth    int
}

// Agent is what the meta-data document describes.
type Agent struct {
	Name       string
	Version    string
	Shortdesc  string
	Longdesc   string
	Parameters []Parameter
	Actions    []Action
}

// The XML shapes follow resource-agents' ra-api-1.dtd.
type xmlAgent struct {
	XMLName    xml.Name    `xml:"resource-agent"`
	Name       string      `xml:"name,attr"`
	Version    string      `xml:"version,attr"`
	APIVersion string      `xml:"version"`
	Longdesc   xmlDesc     `xml:"longdesc"`
	Shortdesc  xmlDesc     `xml:"shortdesc"`
	Parameters []xmlParam  `xml:"parameters>parameter"`
	Actions    []xmlAction `xml:"actions>action"`
}

type xmlDesc struct {
	Lang string `xml:"lang,attr"`
	Text string `xml:",chardata"`
}

type xmlParam struct {
	Name       string     `xml:"name,attr"`
	Unique     string     `xml:"unique,attr"`
	Required   string     `xml:"required,attr"`
	Reloadable string     `xml:"reloadable,attr,omitempty"`
	Longdesc   xmlDesc    `xml:"longdesc"`
	Shortdesc  xmlDesc    `xml:"shortdesc"`
	Content    xmlContent `xml:"content"`
}

type xmlContent struct {
	Type    string `xml:"type,attr"`
	Default string `xml:"default,attr"`
}

type xmlAction struct {
	Name     string `xml:"name,attr"`
	Timeout  string `xml:"timeout,attr"`
	Interval string `xml:"interval,attr,omitempty"`
	Role     string `xml:"role,attr,omitempty"`
	Depth    string `xml:"depth,attr,omitempty"`
}

func boolAttr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func seconds(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }

// MetaData renders the agent's meta-data XML document.
func (a Agent) MetaData() ([]byte, error) {
	doc := xmlAgent{
		Name: a.Name, Version: a.Version, APIVersion: "1.1",
		Longdesc:  xmlDesc{Lang: "en", Text: a.Longdesc},
		Shortdesc: xmlDesc{Lang: "en", Text: a.Shortdesc},
	}
	for _, p := range a.Parameters {
		x := xmlParam{
			Name: p.Name, Unique: boolAttr(p.Unique), Required: boolAttr(p.Required),
			Longdesc:  xmlDesc{Lang: "en", Text: p.Longdesc},
			Shortdesc: xmlDesc{Lang: "en", Text: p.Shortdesc},
			Content:   xmlContent{Type: p.Type, Default: p.Default},
		}
		if p.Reloadable {
			x.Reloadable = "1"
		}
		doc.Parameters = append(doc.Parameters, x)
	}
	for _, act := range a.Actions {
		x := xmlAction{Name: act.Name, Timeout: seconds(act.Timeout), Role: act.Role}
		if act.Interval > 0 {
			x.Interval = seconds(act.Interval)
			x.Depth = strconv.Itoa(act.Depth)
		}
		doc.Actions = append(doc.Actions, x)
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	head := xml.Header + `<!DOCTYPE resource-agent SYSTEM "ra-api-1.dtd">` + "\n"
	return append([]byte(head), append(out, '\n')...), nil
}
