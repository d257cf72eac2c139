package pcmk

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
)

// offlineCIB is an empty CIB in a file, and the tools pointed at it as at a live cluster.
func offlineCIB(t *testing.T) (Tools, string) {
	t.Helper()
	empty, err := command.Run(context.Background(), "cibadmin", "--empty")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cib.xml")
	if err := os.WriteFile(path, []byte(empty), 0o600); err != nil {
		t.Fatal(err)
	}
	return Tools{Env: []string{"CIB_file=" + path}}, path
}

var testConfiguration = [][]string{
	{"property", "set", "stonith-enabled=false", "cluster-recheck-interval=1min"},
	{"resource", "create", "first", "ocf:heartbeat:Dummy", "op", "monitor", "interval=10s", "clone", "interleave=true"},
	{"resource", "create", "second", "ocf:heartbeat:Dummy", "clone"},
	{"constraint", "order", "start", "first-clone", "then", "start", "second-clone"},
	{"constraint", "location", "second-clone", "avoids", "node3"},
	{"alert", "create", "path=/usr/bin/true", "id=test-alert"},
}

// The batch is what pcs builds when each command runs as its own process.
func TestApplyConfigurationAsSeparateRuns(t *testing.T) {
	ctx := context.Background()
	live, livePath := offlineCIB(t)
	changed, err := live.ApplyConfiguration(ctx, "pcs", testConfiguration)
	if err != nil || !changed {
		t.Fatalf("first apply: changed %v, %v", changed, err)
	}
	separate, separatePath := offlineCIB(t)
	for _, args := range testConfiguration {
		if _, err := separate.Run(ctx, "pcs", append([]string{"-f", separatePath}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	// crm_diff exits 0 when the two configurations are the same.
	if out, err := live.Run(ctx, "crm_diff", "--original", separatePath, "--new", livePath, "--no-version"); err != nil {
		t.Fatalf("the batch built another configuration than separate pcs runs: %v\n%s", err, out)
	}
	changed, err = live.ApplyConfiguration(ctx, "pcs", testConfiguration)
	if err != nil || changed {
		t.Fatalf("second apply: changed %v, %v; want unchanged", changed, err)
	}
}

// A command pcs refuses stops the batch, is named in the error, and leaves the live CIB as it was.
func TestApplyConfigurationStopsAtRefusedCommand(t *testing.T) {
	ctx := context.Background()
	live, livePath := offlineCIB(t)
	before, err := os.ReadFile(livePath)
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{"resource", "create", "third", "ocf:heartbeat:NoSuchAgent"}
	cmds := append(append([][]string(nil), testConfiguration[:2]...), bad, testConfiguration[2])
	_, err = live.ApplyConfiguration(ctx, "pcs", cmds)
	if err == nil {
		t.Fatal("applied a configuration with an unknown agent")
	}
	for _, part := range []string{"pcs -f ", strings.Join(bad, " "), "NoSuchAgent"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
	if strings.Contains(err.Error(), "second") {
		t.Errorf("error %q names a command after the refused one", err)
	}
	after, err := os.ReadFile(livePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("the live CIB changed")
	}
}

func TestScriptInterpreter(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       []string // nil: an error
	}{
		{"pcs", "#!/usr/bin/python3 -Es\nimport sys\n", []string{"/usr/bin/python3", "-Es"}},
		{"plain", "#!/usr/bin/python3\n", []string{"/usr/bin/python3"}},
		{"env", "#! /usr/bin/env python3 -s\n", []string{"/usr/bin/env", "python3 -s"}},
		{"binary", "\x7fELF\x02\x01", nil},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.text), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := scriptInterpreter(path)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: got %q, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// Recheck changes its own option each time and no other.
func TestRecheck(t *testing.T) {
	ctx := context.Background()
	live, _ := offlineCIB(t)
	var values []string
	for range 2 {
		if err := live.Recheck(ctx); err != nil {
			t.Fatal(err)
		}
		v, set, err := live.Attribute(ctx, "--type", "crm_config", "--name", RecheckOption)
		if err != nil || !set {
			t.Fatalf("%s: %q %v %v", RecheckOption, v, set, err)
		}
		values = append(values, v)
	}
	if values[0] == values[1] {
		t.Errorf("the second recheck wrote the same value %q: no configuration change, no scheduler run", values[0])
	}
	out, err := live.Run(ctx, "cibadmin", "--query", "--scope", "crm_config")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "<nvpair "); n != 1 {
		t.Errorf("crm_config holds %d options, want only %s:\n%s", n, RecheckOption, out)
	}
}

// A folder without a CIB gets one holding the options, which the CIB tools read back; a folder
// with any CIB file, a backup included, is left alone.
func TestSeedCIB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	options := [][2]string{{"dc-deadtime", "5s"}, {"cluster-recheck-interval", "1min"}}
	seeded, err := Tools{}.SeedCIB(ctx, dir, options)
	if err != nil || !seeded {
		t.Fatalf("seeded %v, %v", seeded, err)
	}
	cib := filepath.Join(dir, "cib.xml")
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want cib.xml alone", len(entries))
	}
	if info, err := os.Stat(cib); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("cib.xml: %v %v", info, err)
	}
	for _, o := range options {
		got, set, err := Tools{Env: []string{"CIB_file=" + cib}}.Attribute(ctx, "--type", "crm_config", "--name", o[0])
		if err != nil || !set || got != o[1] {
			t.Errorf("%s: %q (set %v, %v), want %q", o[0], got, set, err, o[1])
		}
	}
	before, _ := os.ReadFile(cib)
	if seeded, err := (Tools{}).SeedCIB(ctx, dir, [][2]string{{"dc-deadtime", "9s"}}); err != nil || seeded {
		t.Errorf("second seed: seeded %v, %v", seeded, err)
	}
	if after, _ := os.ReadFile(cib); string(after) != string(before) {
		t.Error("a second seed changed the CIB")
	}

	backupOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(backupOnly, "cib-3.raw"), []byte("<cib/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	if seeded, err := (Tools{}).SeedCIB(ctx, backupOnly, options); err != nil || seeded {
		t.Errorf("beside a backup: seeded %v, %v", seeded, err)
	}
	if _, err := os.Stat(filepath.Join(backupOnly, "cib.xml")); !os.IsNotExist(err) {
		t.Errorf("cib.xml written beside a backup: %v", err)
	}
}
