package clusterconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallPageExample: the tnf.yaml example of docs/install.md loads as written (with the
// password files and the Corosync key it names beside it), so the page cannot drift from the
// fields the code reads.
func TestInstallPageExample(t *testing.T) {
	page, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "<!-- example: tnf.yaml -->\n```yaml\n")
	if !ok {
		t.Fatal("docs/install.md: no tnf.yaml example (<!-- example: tnf.yaml --> before a yaml block)")
	}
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/install.md: the tnf.yaml example's block does not end")
	}
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
