package pcmk

import (
	"context"
	"encoding/xml"
	"fmt"
	"strings"
)

// Configuration is what tnfctl status reads of the CIB's configuration beside crm_mon: the
// cluster properties (crm_config, where the field's etcd agent keeps learner_node and
// standalone_node) and the fence devices. A device's parameters are not kept, its password among
// them: only whether it checks the BMC's certificate.
type Configuration struct {
	Properties   map[string]string `json:"properties,omitempty"`
	FenceDevices []FenceDevice     `json:"fenceDevices,omitempty"`
}

// FenceDevice is one stonith resource.
type FenceDevice struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Insecure: its ssl_insecure is set, so the agent takes any certificate the BMC's address
	// shows, and whoever answers there can fake a power-off.
	Insecure bool `json:"insecure,omitempty"`
}

// Configuration reads the live CIB's configuration section once.
func (t Tools) Configuration(ctx context.Context) (Configuration, error) {
	out, err := t.Run(ctx, "cibadmin", "--query", "--scope", "configuration")
	if err != nil {
		return Configuration{}, err
	}
	return parseConfiguration([]byte(out))
}

type nvpairs struct {
	NVPairs []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"nvpair"`
}

type cibConfiguration struct {
	PropertySets []nvpairs `xml:"crm_config>cluster_property_set"`
	// The top-level primitives only: where pcs makes fence devices, the operator's and the
	// layer's. A device nested in a group or clone by hand is not read.
	Primitives []cibPrimitive `xml:"resources>primitive"`
}

type cibPrimitive struct {
	ID         string    `xml:"id,attr"`
	Class      string    `xml:"class,attr"`
	Type       string    `xml:"type,attr"`
	Attributes []nvpairs `xml:"instance_attributes"`
}

func parseConfiguration(data []byte) (Configuration, error) {
	var c cibConfiguration
	if err := xml.Unmarshal(data, &c); err != nil {
		return Configuration{}, fmt.Errorf("cibadmin's configuration: %w", err)
	}
	conf := Configuration{Properties: map[string]string{}}
	for _, set := range c.PropertySets {
		for _, p := range set.NVPairs {
			conf.Properties[p.Name] = p.Value
		}
	}
	for _, p := range c.Primitives {
		if p.Class != "stonith" {
			continue
		}
		d := FenceDevice{ID: p.ID, Agent: p.Type}
		for _, set := range p.Attributes {
			for _, a := range set.NVPairs {
				if a.Name == "ssl_insecure" || a.Name == "ssl-insecure" {
					d.Insecure = fenceBool(a.Value)
				}
			}
		}
		conf.FenceDevices = append(conf.FenceDevices, d)
	}
	return conf, nil
}

// fenceBool reads a fence agent's boolean parameter as the fencing library reads its standard
// input (fencing.py, _parse_input_stdin): quotes around it dropped, these words true whatever
// their case, anything else not.
func fenceBool(v string) bool {
	switch strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)) {
	case "1", "yes", "on", "true":
		return true
	}
	return false
}
