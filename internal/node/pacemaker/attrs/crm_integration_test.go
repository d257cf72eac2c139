//go:build integration

package attrs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCRMStore runs the store semantics against Pacemaker's real crm_attribute and cibadmin on
// an offline CIB file (CIB_file). Reboot-lifetime attributes need a running attrd and are
// covered by the cluster tests.
func TestCRMStore(t *testing.T) {
	cib := filepath.Join(t.TempDir(), "cib.xml")
	empty, err := exec.Command("cibadmin", "--empty").Output()
	if err != nil {
		t.Fatalf("cibadmin --empty: %v", err)
	}
	if err := os.WriteFile(cib, empty, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"CIB_file=" + cib}
	for _, node := range []string{`<node id="1" uname="node1"/>`, `<node id="2" uname="node2"/>`} {
		cmd := exec.Command("cibadmin", "--create", "--scope", "nodes", "--xml-text", node)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	exercise(t, CRM{Env: env})
	// A node the CIB does not know: crm_attribute exits CRM_EX_NOSUCH as for an unset attribute,
	// with another message. Its attributes cannot be read, which is not "none".
	if v, ok, err := (CRM{Env: env}).Get(t.Context(), "node9", "tnf-etcd-record", Forever); err == nil {
		t.Errorf("an attribute of a node the CIB does not know: %q, %v, no error", v, ok)
	}
}
