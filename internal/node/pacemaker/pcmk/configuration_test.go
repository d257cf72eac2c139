package pcmk

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestConfiguration reads a CIB made by the commands that make the operator's (its fence devices
// through pcs, one without checking the BMC's certificate) and by the field's etcd agent (its
// cluster properties through crm_attribute), offline: the properties, each device and whether it
// checks, and no password anywhere.
func TestConfiguration(t *testing.T) {
	ctx := context.Background()
	tools, path := offlineCIB(t)
	for _, args := range [][]string{
		{"pcs", "-f", path, "stonith", "create", "master-0_redfish", "fence_redfish", "username=admin", "password=s3cret-0", "ip=192.0.2.100",
			"systems_uri=/redfish/v1/Systems/1", "pcmk_host_list=master-0", "ssl_insecure=1"},
		{"pcs", "-f", path, "stonith", "create", "master-1_redfish", "fence_redfish", "username=admin", "password=s3cret-1", "ip=192.0.2.101",
			"systems_uri=/redfish/v1/Systems/1", "pcmk_host_list=master-1"},
		{"pcs", "-f", path, "resource", "create", "dummy", "ocf:heartbeat:Dummy"},
		{"crm_attribute", "--name", "learner_node", "--update", "master-1"},
		{"crm_attribute", "--name", "standalone_node", "--update", "master-0"},
	} {
		if out, err := tools.Run(ctx, args[0], args[1:]...); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	got, err := tools.Configuration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []FenceDevice{{ID: "master-0_redfish", Agent: "fence_redfish", Insecure: true, Targets: []string{"master-0"}},
		{ID: "master-1_redfish", Agent: "fence_redfish", Targets: []string{"master-1"}}}
	if !reflect.DeepEqual(got.FenceDevices, want) {
		t.Errorf("fence devices %+v, want %+v", got.FenceDevices, want)
	}
	if got.Properties["learner_node"] != "master-1" || got.Properties["standalone_node"] != "master-0" {
		t.Errorf("properties %v", got.Properties)
	}
	if data, err := json.Marshal(got); err != nil || strings.Contains(string(data), "s3cret") {
		t.Errorf("what status shows holds a password: %s %v", data, err)
	}
	agent, params, err := tools.FenceDeviceParams(ctx, "master-0_redfish")
	if err != nil || agent != "fence_redfish" || params["password"] != "s3cret-0" || params["ssl_insecure"] != "1" || params["ip"] != "192.0.2.100" {
		t.Errorf("FenceDeviceParams(master-0_redfish) = %q, %d parameters, %v", agent, len(params), err)
	}
	if v, set, err := tools.FenceDeviceParam(ctx, "master-1_redfish", "ip"); err != nil || !set || v != "192.0.2.101" {
		t.Errorf("FenceDeviceParam(master-1_redfish, ip) = %q, %v, %v", v, set, err)
	}
	if v, set, err := tools.FenceDeviceParam(ctx, "master-1_redfish", "pcmk_delay_base"); err != nil || set {
		t.Errorf("FenceDeviceParam(master-1_redfish, pcmk_delay_base) = %q, %v, %v: it was never set", v, set, err)
	}
	for id, want := range map[string]string{"dummy": "not a fence device", "master-2_redfish": "no fence device master-2_redfish"} {
		if _, _, err := tools.FenceDeviceParams(ctx, id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FenceDeviceParams(%s): %v, want %q", id, err, want)
		}
	}
	if _, err := parseConfiguration([]byte("<configuration><crm_config>")); err == nil {
		t.Error("a torn configuration was read")
	}
}

// TestReadSecrets reads a cibsecret-kept password from the node's secrets, as Pacemaker does, and
// says which device and parameter lack theirs.
func TestReadSecrets(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fence-n2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fence-n2", "password"), []byte("pa ss\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"password": SecretRef, "ip": "192.0.2.2"}
	if err := readSecrets(dir, "fence-n2", params); err != nil || params["password"] != "pa ss" || params["ip"] != "192.0.2.2" {
		t.Errorf("readSecrets: %v, %d parameters", err, len(params))
	}
	err := readSecrets(dir, "fence-n1", map[string]string{"password": SecretRef})
	if err == nil || !strings.Contains(err.Error(), "fence-n1's password is kept by cibsecret") {
		t.Errorf("readSecrets without the file: %v", err)
	}
}
