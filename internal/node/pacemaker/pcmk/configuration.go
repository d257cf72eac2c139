package pcmk

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/fencing/fencerun"
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
	// Targets are the nodes it fences (pcmk_host_list): the layer's devices and the
	// operator's each name one.
	Targets []string `json:"targets,omitempty"`
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
				switch a.Name {
				case "ssl_insecure", "ssl-insecure":
					d.Insecure = fencerun.Bool(a.Value)
				case "pcmk_host_list":
					// Pacemaker splits the list on spaces, commas and semicolons.
					d.Targets = strings.FieldsFunc(a.Value, func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
				}
			}
		}
		conf.FenceDevices = append(conf.FenceDevices, d)
	}
	return conf, nil
}

// SecretRef is the CIB value of a parameter kept by cibsecret: Pacemaker reads the value from
// SecretsDir/<resource>/<parameter> on the node that runs the resource.
const SecretRef = "lrm://"

// SecretsDir is where Pacemaker's cibsecret support looks for secret parameters.
const SecretsDir = "/var/lib/pacemaker/lrm/secrets"

// FenceDeviceParams reads stonith device id's agent and parameters from the live CIB, its password
// among them: what fence-check needs to check the credential the device itself holds. A
// parameter kept by cibsecret (the layer's devices keep their passwords so) is read from this
// node's secrets, as Pacemaker reads it. They are never shown.
func (t Tools) FenceDeviceParams(ctx context.Context, id string) (agent string, params map[string]string, err error) {
	if agent, params, err = t.fenceDeviceInCIB(ctx, id); err != nil {
		return "", nil, err
	}
	return agent, params, readSecrets(SecretsDir, id, params)
}

// FenceDeviceParam is parameter name of stonith device id as the live CIB holds it (SecretRef
// for one cibsecret keeps): no secret is read.
func (t Tools) FenceDeviceParam(ctx context.Context, id, name string) (value string, set bool, err error) {
	_, params, err := t.fenceDeviceInCIB(ctx, id)
	if err != nil {
		return "", false, err
	}
	value, set = params[name]
	return value, set, nil
}

func (t Tools) fenceDeviceInCIB(ctx context.Context, id string) (string, map[string]string, error) {
	out, err := t.Run(ctx, "cibadmin", "--query", "--scope", "resources")
	if err != nil {
		return "", nil, err
	}
	return fenceDeviceParams([]byte(out), id)
}

// readSecrets replaces each of device id's params that cibsecret keeps with its value under dir
// (dir/<id>/<name>, its line's end dropped, as Pacemaker's cib_secrets.c reads it).
func readSecrets(dir, id string, params map[string]string) error {
	for name, v := range params {
		if v != SecretRef {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, id, name))
		if err != nil {
			return fmt.Errorf("%s's %s is kept by cibsecret, and this node does not hold it: %w", id, name, err)
		}
		params[name] = strings.TrimRight(string(data), "\r\n")
	}
	return nil
}

func fenceDeviceParams(data []byte, id string) (string, map[string]string, error) {
	var c struct {
		Primitives []cibPrimitive `xml:"primitive"`
	}
	if err := xml.Unmarshal(data, &c); err != nil {
		return "", nil, fmt.Errorf("cibadmin's resources: %w", err)
	}
	for _, p := range c.Primitives {
		if p.ID != id {
			continue
		}
		if p.Class != "stonith" {
			return "", nil, fmt.Errorf("%s is a %s resource, not a fence device", id, p.Class)
		}
		params := map[string]string{}
		for _, set := range p.Attributes {
			for _, a := range set.NVPairs {
				params[a.Name] = a.Value
			}
		}
		return p.Type, params, nil
	}
	return "", nil, fmt.Errorf("no fence device %s in the CIB's resources (pcs stonith status lists them)", id)
}
