// Package tnflayer holds what the tools embed from the top of the repository: the Containerfile
// template, the layer definitions and the Pacemaker/Corosync templates.
package tnflayer

import "embed"

// ContainerfileTemplate is the top-level Containerfile, a text/template rendered by
// internal/build/containerfile from typed inputs.
//
//go:embed Containerfile
var ContainerfileTemplate string

// Layers are the layer definitions, layers/NAME.yaml.
//
//go:embed layers/*.yaml
var Layers embed.FS

// PCSTemplates are pcs-templates/: corosync.conf and the cluster configuration as pcs commands,
// rendered by internal/node/pacemaker/pcsconfig.
//
//go:embed pcs-templates/*.tmpl
var PCSTemplates embed.FS

// Units are the systemd units, drop-ins and presets the layer ships (units/).
//
//go:embed units
var Units embed.FS
