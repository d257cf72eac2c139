package attrs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
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

// exitNoSuch is crm_attribute's CRM_EX_NOSUCH: the attribute is not set.
const exitNoSuch = 105

func (c CRM) run(ctx context.Context, name string, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(cmd.Environ(), c.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode(), fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), strings.TrimSpace(errb.String()))
	}
	if err != nil {
		return "", -1, fmt.Errorf("%s: %w", name, err)
	}
	return strings.TrimSpace(out.String()), 0, nil
}

func (c CRM) query(ctx context.Context, args ...string) (string, bool, error) {
	out, code, err := c.run(ctx, "crm_attribute", append(args, "--query", "--quiet")...)
	if code == exitNoSuch {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return out, true, nil
}

func (c CRM) Get(ctx context.Context, node, name string, lt Lifetime) (string, bool, error) {
	return c.query(ctx, "--node", node, "--name", name, "--lifetime", lt.String())
}

func (c CRM) Set(ctx context.Context, node, name, value string, lt Lifetime) error {
	args := []string{"--node", node, "--name", name, "--lifetime", lt.String()}
	if value == "" {
		_, code, err := c.run(ctx, "crm_attribute", append(args, "--delete")...)
		if code == exitNoSuch {
			return nil
		}
		return err
	}
	_, _, err := c.run(ctx, "crm_attribute", append(args, "--update", value)...)
	return err
}

func (c CRM) Holder(ctx context.Context) (string, error) {
	v, _, err := c.query(ctx, "--type", "crm_config", "--name", claimName)
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
	xml := fmt.Sprintf(`<cluster_property_set id=%q><nvpair id=%q name=%q value=%q/></cluster_property_set>`,
		claimSetID, claimName, claimName, owner)
	if _, _, err := c.run(ctx, "cibadmin", "--create", "--scope", "crm_config", "--xml-text", xml); err == nil {
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
	_, _, err = c.run(ctx, "cibadmin", "--delete", "--xml-text", fmt.Sprintf(`<cluster_property_set id=%q/>`, claimSetID))
	return err
}
