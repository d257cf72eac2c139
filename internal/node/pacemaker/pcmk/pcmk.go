// Package pcmk reads and changes a running Corosync/Pacemaker node through its own command-line
// tools (corosync-cmapctl, crm_mon, cibadmin, crm_diff, stonith_admin, crm_attribute): the same
// tools an administrator uses, so no pcsd and no library binding is needed.
package pcmk

import (
	"context"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// Tools runs the cluster tools. Env is added to their environment (CIB_file points the CIB tools
// at an offline file).
type Tools struct {
	Env []string
}

// onFile is t with the CIB tools pointed at the CIB in path instead of the live one.
func (t Tools) onFile(path string) Tools {
	return Tools{Env: append(append([]string(nil), t.Env...), "CIB_file="+path)}
}

// Run runs one tool and returns its standard output; a failure is a *command.Error.
func (t Tools) Run(ctx context.Context, name string, args ...string) (string, error) {
	return command.Cmd{Env: t.Env}.Run(ctx, name, args...)
}

// ExitNoSuch is CRM_EX_NOSUCH: crm_attribute's answer for an attribute that is not set.
const ExitNoSuch = 105

// Attribute reads one attribute with crm_attribute (args select it); false when it is not set.
func (t Tools) Attribute(ctx context.Context, args ...string) (string, bool, error) {
	out, err := t.Run(ctx, "crm_attribute", append(args, "--query", "--quiet")...)
	if command.ExitCode(err) == ExitNoSuch {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}
