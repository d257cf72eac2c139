package attrs

import (
	"context"
	"encoding/xml"

	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// claimSet is the cluster_property_set that holds the claim; cibadmin --create of an element
// whose id exists fails, which makes taking the claim atomic across the cluster.
const (
	claimSetID = "tnf-etcd-claim"
	claimName  = "tnf-etcd-claim-owner"
)

// CRM is the Store on a running cluster: Pacemaker's crm_attribute and cibadmin. Env is added
// to their environment (tests point CIB_file at an offline CIB).
type CRM struct {
	Env []string
}

func (c CRM) tools() pcmk.Tools { return pcmk.Tools{Env: c.Env} }

func (c CRM) Get(ctx context.Context, node, name string, lt Lifetime) (string, bool, error) {
	return c.tools().Attribute(ctx, "--node", node, "--name", name, "--lifetime", lt.String())
}

func (c CRM) Set(ctx context.Context, node, name, value string, lt Lifetime) error {
	return c.set(ctx, value, "--node", node, "--name", name, "--lifetime", lt.String())
}

func (c CRM) Property(ctx context.Context, name string) (string, bool, error) {
	return c.tools().Attribute(ctx, "--type", "crm_config", "--name", name)
}

func (c CRM) SetProperty(ctx context.Context, name, value string) error {
	return c.set(ctx, value, "--type", "crm_config", "--name", name)
}

// set updates the attribute args name to value, or deletes it when value is "".
func (c CRM) set(ctx context.Context, value string, args ...string) error {
	if value == "" {
		_, err := c.tools().Run(ctx, "crm_attribute", append(args, "--delete")...)
		if pcmk.NotSet(err) {
			return nil
		}
		return err
	}
	_, err := c.tools().Run(ctx, "crm_attribute", append(args, "--update", value)...)
	return err
}

func (c CRM) Holder(ctx context.Context) (string, error) {
	v, _, err := c.Property(ctx, claimName)
	return v, err
}

func (c CRM) Claim(ctx context.Context, owner, overrideFrom string) (string, error) {
	holder, err := c.Holder(ctx)
	if err != nil {
		return "", err
	}
	if holder != "" && holder == overrideFrom {
		if err := c.Release(ctx, overrideFrom); err != nil {
			return "", err
		}
	}
	set, err := xml.Marshal(propertySet{ID: claimSetID, NVPairs: []nvpair{{ID: claimName, Name: claimName, Value: owner}}})
	if err != nil {
		return "", err
	}
	if _, err := c.tools().Run(ctx, "cibadmin", "--create", "--scope", "crm_config", "--xml-text", string(set)); err == nil {
		return owner, nil
	}
	// Taken meanwhile (or the CIB refused): report who holds it now.
	return c.Holder(ctx)
}

func (c CRM) Release(ctx context.Context, owner string) error {
	holder, err := c.Holder(ctx)
	if err != nil || holder != owner {
		return err
	}
	set, err := xml.Marshal(propertySet{ID: claimSetID})
	if err != nil {
		return err
	}
	_, err = c.tools().Run(ctx, "cibadmin", "--delete", "--xml-text", string(set))
	return err
}

// propertySet is a CIB cluster_property_set, the claim's home in crm_config.
type propertySet struct {
	XMLName xml.Name `xml:"cluster_property_set"`
	ID      string   `xml:"id,attr"`
	NVPairs []nvpair `xml:"nvpair"`
}

type nvpair struct {
	ID    string `xml:"id,attr"`
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

func (c CRM) ReportFailure(ctx context.Context, node, resource string) error {
	return c.tools().Fail(ctx, BaseResource(resource), node)
}
