package crdvalidate

import (
	"strings"
	"testing"
)

// TestRefusals: the validators refuse what the apiserver refuses, each error naming the field:
// the schema (a missing required field), a CEL rule (name equal to the pool), unknown fields.
func TestRefusals(t *testing.T) {
	vs, err := OpenShift()
	if err != nil {
		t.Fatal(err)
	}
	mosc := func(edit func(spec map[string]any, obj map[string]any)) map[string]any {
		spec := map[string]any{
			"machineConfigPool":       map[string]any{"name": "master"},
			"imageBuilder":            map[string]any{"imageBuilderType": "Job"},
			"renderedImagePushSecret": map[string]any{"name": "push"},
			"renderedImagePushSpec":   "registry.example.com/tnf/os-image:latest",
			"containerFile":           []any{map[string]any{"containerfileArch": "NoArch", "content": "FROM configs AS final\n"}},
		}
		obj := map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineOSConfig",
			"metadata": map[string]any{"name": "master"}, "spec": spec}
		edit(spec, obj)
		return obj
	}
	if err := vs["MachineOSConfig"].Validate(mosc(func(map[string]any, map[string]any) {})); err != nil {
		t.Fatalf("a good MachineOSConfig refused: %v", err)
	}
	for _, r := range []struct {
		name string
		edit func(spec, obj map[string]any)
		want string
	}{
		{"name is not the pool", func(_, obj map[string]any) { obj["metadata"] = map[string]any{"name": "other"} }, "must match the referenced MachineConfigPool"},
		{"push spec port of one digit", func(spec, _ map[string]any) { spec["renderedImagePushSpec"] = "registry.example:5/x:t" }, "spec.renderedImagePushSpec"},
		{"upper-case pool", func(spec, obj map[string]any) {
			spec["machineConfigPool"] = map[string]any{"name": "Master"}
			obj["metadata"] = map[string]any{"name": "Master"}
		}, "spec.machineConfigPool.name"},
		{"no push secret", func(spec, _ map[string]any) { delete(spec, "renderedImagePushSecret") }, "spec.renderedImagePushSecret"},
		{"unknown field", func(spec, _ map[string]any) { spec["flavour"] = "spicy" }, "spec.flavour: unknown field"},
		{"wrong kind", func(_, obj map[string]any) { obj["kind"] = "MachineConfig" }, "kind"},
	} {
		err := vs["MachineOSConfig"].Validate(mosc(r.edit))
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want an error naming %q", r.name, err, r.want)
		}
	}
}
