// Package pcmk reads and changes a running Corosync/Pacemaker node through its own command-line
// tools (corosync-cmapctl, crm_mon, cibadmin, crm_diff, stonith_admin, crm_attribute): the same
// tools an administrator uses, so no pcsd and no library binding is needed.
package pcmk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Tools runs the cluster tools. Env is added to their environment (CIB_file points the CIB tools
// at an offline file).
type Tools struct {
	Env []string
}

// ExitError is a tool that ran and failed.
type ExitError struct {
	Command string
	Code    int
	Stderr  string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s: exit %d: %s", e.Command, e.Code, e.Stderr)
}

// Run runs one tool and returns its standard output.
func (t Tools) Run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(cmd.Environ(), t.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.String(), &ExitError{Command: name + " " + strings.Join(args, " "), Code: ee.ExitCode(), Stderr: msg}
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return out.String(), nil
}

// ExitNoSuch is CRM_EX_NOSUCH: crm_attribute's answer for an attribute that is not set.
const ExitNoSuch = 105

// ExitCode is the tool's exit code from Run's error: 0 on success, -1 when it did not run.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

// Attribute reads one attribute with crm_attribute (args select it); false when it is not set.
func (t Tools) Attribute(ctx context.Context, args ...string) (string, bool, error) {
	out, err := t.Run(ctx, "crm_attribute", append(args, "--query", "--quiet")...)
	if ExitCode(err) == ExitNoSuch {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}
