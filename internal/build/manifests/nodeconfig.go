package manifests

import (
	"errors"
	"fmt"

	"github.com/coreos/butane/config"
	"github.com/coreos/butane/config/common"
	ign34 "github.com/coreos/ignition/v2/config/v3_4"
	ign "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/vcontext/report"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
)

// butane's openshift variant input, built from types so nothing is spliced into YAML text.
type butaneConfig struct {
	Variant  string         `json:"variant"`
	Version  string         `json:"version"`
	Metadata butaneMetadata `json:"metadata"`
	Storage  butaneStorage  `json:"storage"`
}

type butaneMetadata struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type butaneStorage struct {
	Files []butaneFile `json:"files"`
}

type butaneFile struct {
	Path     string         `json:"path"`
	Mode     int            `json:"mode"`
	Contents butaneContents `json:"contents"`
}

type butaneContents struct {
	Inline string `json:"inline"`
}

// ignitionSpecs are the Ignition specs the node configuration is rendered in: butane's openshift
// variant that emits each, and the spec's own parser, which validates the result as the MCO of a
// release that accepts that spec does (MCO parses a MachineConfig with the types of the newest
// spec it supports: 3.4 up to 4.18, 3.5 from 4.19, openshift/machine-config-operator #4903).
var ignitionSpecs = map[string]struct {
	butaneVariant string
	parse         func([]byte) error
}{
	"3.4.0": {"4.18.0", func(raw []byte) error { return validIgnition(ign34.Parse(raw)) }},
	"3.5.0": {"4.19.0", func(raw []byte) error { return validIgnition(ign.Parse(raw)) }},
}

func validIgnition[C any](_ C, rpt report.Report, err error) error {
	if err != nil {
		return err
	}
	if rpt.IsFatal() {
		return errors.New(rpt.String())
	}
	return nil
}

// NodeConfig renders the node configuration MachineConfig for the pool: /etc/tnf/cluster.yaml
// (0644), the input's other files (0644) and one 0600 file per secret, in the Ignition spec
// ignition (what the layer's release accepts: layerdef.Layer.IgnitionVersion). It goes through
// butane's openshift variant for that spec in-process, and the Ignition it carries is validated
// with that spec's own parser.
func NodeConfig(pool string, in clusterconfig.Input, ignition string) (*mcfgv1.MachineConfig, error) {
	if err := checkPool(pool); err != nil {
		return nil, err
	}
	spec, ok := ignitionSpecs[ignition]
	if !ok {
		return nil, fmt.Errorf("ignition spec %q: the node configuration is rendered in 3.4.0 or 3.5.0", ignition)
	}
	clusterYAML, err := in.Config.Marshal()
	if err != nil {
		return nil, err
	}
	files := []butaneFile{{Path: clusterconfig.Path, Mode: 0o644, Contents: butaneContents{Inline: string(clusterYAML)}}}
	for _, f := range in.Files {
		files = append(files, butaneFile{Path: f.Path, Mode: 0o644, Contents: butaneContents{Inline: string(f.Data)}})
	}
	for _, s := range in.Secrets {
		files = append(files, butaneFile{Path: s.Path, Mode: 0o600, Contents: butaneContents{Inline: string(s.Data)}})
	}
	src, err := yaml.Marshal(butaneConfig{
		Variant: "openshift", Version: spec.butaneVariant,
		Metadata: butaneMetadata{Name: nodeConfigName(pool), Labels: roleLabels(pool)},
		Storage:  butaneStorage{Files: files},
	})
	if err != nil {
		return nil, err
	}
	out, report, err := config.TranslateBytes(src, common.TranslateBytesOptions{})
	if err != nil {
		return nil, fmt.Errorf("butane: %w: %s", err, report.String())
	}
	if report.IsFatal() {
		return nil, fmt.Errorf("butane: %s", report.String())
	}
	var mc mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict(out, &mc); err != nil {
		return nil, fmt.Errorf("butane output is not a MachineConfig: %w", err)
	}
	if err := spec.parse(mc.Spec.Config.Raw); err != nil {
		return nil, fmt.Errorf("node configuration is not valid Ignition %s: %w", ignition, err)
	}
	return &mc, nil
}

// nodeConfigName names the node configuration MachineConfig of pool (and its file, with .yaml).
func nodeConfigName(pool string) string { return "99-" + pool + "-tnf-node-config" }
