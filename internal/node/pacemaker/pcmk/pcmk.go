// Package pcmk reads and changes a running Corosync/Pacemaker node through its own command-line
// tools (corosync-cmapctl, crm_mon, cibadmin, crm_diff, stonith_admin, crm_attribute): the same
// tools an administrator uses, so no pcsd and no library binding is needed.
package pcmk

import (
	"context"
	"errors"
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

// ExitNoSuch is CRM_EX_NOSUCH: crm_attribute's and cibadmin's exit code for what is not there.
const ExitNoSuch = 105

// notSetMessage is what crm_attribute and cibadmin print with ExitNoSuch when only what they
// name is not there (an attribute, a CIB section).
const notSetMessage = "No such device or address"

// NotSet says whether a crm_attribute or cibadmin call failed only because what it names is not
// set: an attribute (the peer's too, before it joined), or a section of the CIB. Pacemaker 2.1.5
// and 3.0.0 answer so alike, with ExitNoSuch and notSetMessage (their answers are captured in
// testdata/answers by make pacemaker-answers). The same exit code with another message (a node
// the CIB does not know: "Could not map name=... to a UUID") and every other exit code are
// errors: what cannot be read is never "not set". Exit 6 among them, which podman-etcd also reads
// as "not found" (resource-agents #2201: Pacemakers before 2.1 answered so); in 2.1 and 3.0 it is
// CRM_EX_NOT_CONFIGURED.
func NotSet(err error) bool {
	var e *command.Error
	return errors.As(err, &e) && e.Code == ExitNoSuch && strings.Contains(e.Output, notSetMessage)
}

// Attribute reads one attribute with crm_attribute (args select it); false when it is not set.
func (t Tools) Attribute(ctx context.Context, args ...string) (string, bool, error) {
	out, err := t.Run(ctx, "crm_attribute", append(args, "--query", "--quiet")...)
	if NotSet(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}
