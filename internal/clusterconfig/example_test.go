package clusterconfig

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
)

// TestInstallPageExample: the tnf.yaml example of docs/install.md loads as written (with the
// password files and the Corosync key it names beside it), so the page cannot drift from the
// fields the code reads.
func TestInstallPageExample(t *testing.T) {
	example := doccheck.Example(t, "docs/install.md", "tnf.yaml")
	dir := t.TempDir()
	write(t, dir, "master-0.password", "pw0\n")
	write(t, dir, "master-1.password", "pw1\n")
	write(t, dir, "corosync-authkey", strings.Repeat("k", 256))
	in, err := LoadTNF(write(t, dir, "tnf.yaml", example))
	if err != nil {
		t.Fatal(err)
	}
	c := in.Config
	if c.ClusterName != "edge-042" || len(c.Nodes) != 2 || !c.AutoUnblock.Enabled || c.Resources.Etcd["runtime"] != "podman" ||
		c.Nodes[1].BMC.CertificateVerification != "Disabled" || c.Nodes[0].BMC.PasswordFile != filepath.Join(SecretsDir, "master-0.password") {
		t.Errorf("the example read as %+v", c)
	}
}
