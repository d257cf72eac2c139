// Package crdvalidate validates an object against a CustomResourceDefinition file the way the
// apiserver does on create: the same code (apiextensions-apiserver's custom resource strategy:
// type and object metadata, OpenAPI schema, list invariants, the CRD's CEL rules), after the
// decoding steps that come before it (unknown fields refused, as with strict field validation;
// nulls of non-nullable fields dropped; metadata coerced; defaults applied). The tests run it on every manifest build-layer writes, with the CRDs of the
// pinned openshift/api module.
package crdvalidate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Validator validates objects of one CRD version.
type Validator struct {
	file       string
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	validate   func(context.Context, runtime.Object) field.ErrorList
}

// Load reads a CRD file and prepares the validation of its storage version.
func Load(file string) (*Validator, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("%s: version %s has no schema", file, v.Name)
		}
		var props apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &props, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		structural, err := structuralschema.NewStructural(&props)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		schemaValidator, _, err := apiservervalidation.NewSchemaValidator(&props)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		strategy := customresource.NewStrategy(nil, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, gvk,
			schemaValidator, nil, structural, nil, nil, nil)
		return &Validator{file: file, gvk: gvk, structural: structural, validate: strategy.Validate}, nil
	}
	return nil, fmt.Errorf("%s: no storage version", file)
}

// Kind is the kind the CRD defines.
func (v *Validator) Kind() string { return v.gvk.Kind }

// Validate returns every reason the apiserver would refuse obj (any value that marshals to the
// object's JSON), each naming the field; nil when it would accept it.
func (v *Validator) Validate(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	var errs []string
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	unknown := pruning.PruneWithOptions(m, v.structural, true, opts)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(m, v.structural)
	metaErr, metaUnknown := schemaobjectmeta.CoerceWithOptions(nil, m, v.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if metaErr != nil { // a *field.Error: compared as such, never as an error interface
		errs = append(errs, metaErr.Error())
	}
	for _, p := range append(unknown, metaUnknown...) {
		errs = append(errs, fmt.Sprintf("%s: unknown field", p))
	}
	structuraldefaulting.Default(m, v.structural)
	for _, e := range v.validate(context.Background(), &unstructured.Unstructured{Object: m}) {
		errs = append(errs, e.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("refused by %s (%s): %s", v.gvk.Kind, v.file, strings.Join(errs, "; "))
	}
	return nil
}

// The CRD files of the objects build-layer writes, in the openshift/api module.
var openShiftCRDs = []string{
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineosconfigs.crd.yaml",
	"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml",
	"operator/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigurations.crd.yaml",
}

// OpenShift loads the validators of those CRDs, by kind, from the openshift/api module this
// repository pins (the module cache's copy, found with `go list -m`).
func OpenShift() (map[string]*Validator, error) {
	dir, err := OpenShiftAPIDir()
	if err != nil {
		return nil, err
	}
	return loadAll(dir, openShiftCRDs)
}

// OpenShiftAPIDir is the folder of the openshift/api module this repository pins, in the module
// cache (found with `go list -m`): its CRD manifests are OpenShift's own.
func OpenShiftAPIDir() (string, error) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		return "", fmt.Errorf("finding the openshift/api module: %w", err)
	}
	return strings.TrimSpace(string(dir)), nil
}

// loadAll loads the validators of the CRD files at rels (slash-separated) under dir, by kind.
func loadAll(dir string, rels []string) (map[string]*Validator, error) {
	out := map[string]*Validator{}
	for _, rel := range rels {
		v, err := Load(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		out[v.Kind()] = v
	}
	return out, nil
}

// PrometheusOperatorCRDs are the CRD files of the prometheus-operator objects build-layer
// writes, in the operator's module (PrometheusOperatorDir).
var PrometheusOperatorCRDs = []string{
	"example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml",
	"example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
}

// PrometheusOperator loads the validators of prometheus-operator's PrometheusRule and
// ServiceMonitor CRDs, by kind (PrometheusOperatorDir).
func PrometheusOperator() (map[string]*Validator, error) {
	dir, err := PrometheusOperatorDir()
	if err != nil {
		return nil, err
	}
	return loadAll(dir, PrometheusOperatorCRDs)
}

// PrometheusOperatorDir is the folder of the prometheus-operator module of the release whose API
// types this repository pins (pkg/apis/monitoring). The CRDs are in the operator's own module,
// not the API types' one: it is downloaded through the module proxy (about 4 MB, once).
func PrometheusOperatorDir() (string, error) {
	version, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring").Output()
	if err != nil {
		return "", fmt.Errorf("finding the prometheus-operator API module: %w", err)
	}
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/prometheus-operator/prometheus-operator@"+strings.TrimSpace(string(version))).Output()
	if err != nil {
		return "", fmt.Errorf("downloading the prometheus-operator module: %w", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download: no module folder in %q", out)
	}
	return mod.Dir, nil
}
