// Package tnflayer holds what the build tool embeds from the top of the repository: the
// Containerfile template and the layer definitions.
package tnflayer

import "embed"

// ContainerfileTemplate is the top-level Containerfile, a text/template rendered by
// internal/containerfile from typed inputs.
//
//go:embed Containerfile
var ContainerfileTemplate string

// Layers are the layer definitions, layers/NAME.yaml.
//
//go:embed layers/*.yaml
var Layers embed.FS
