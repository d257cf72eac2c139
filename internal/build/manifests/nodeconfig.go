package manifests

import (
	"fmt"

	"github.com/coreos/butane/config"
	"github.com/coreos/butane/config/common"
	ign "github.com/coreos/ignition/v2/config/v3_5"
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

// NodeConfig renders the node configuration MachineConfig for the pool: /etc/tnf/cluster.yaml
// (0644), the input's other files (0644) and one 0600 file per secret. It goes through butane's openshift 4.19.0 variant
// in-process and the Ignition it carries is validated as spec 3.5.
func NodeConfig(pool string, in clusterconfig.Input) (*mcfgv1.MachineConfig, error) {
	if err := checkPool(pool); err != nil {
		return nil, err
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
		Variant: "openshift", Version: "4.19.0",
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
	if _, rpt, err := ign.Parse(mc.Spec.Config.Raw); err != nil || rpt.IsFatal() {
		return nil, fmt.Errorf("node configuration is not valid Ignition 3.5: %v %s", err, rpt.String())
	}
	return &mc, nil
}

// nodeConfigName names the node configuration MachineConfig of pool (and its file, with .yaml).
func nodeConfigName(pool string) string { return "99-" + pool + "-tnf-node-config" }
