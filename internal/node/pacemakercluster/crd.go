package pacemakercluster

import _ "embed"

// CRD is the object's CustomResourceDefinition (crd.yaml), which build-layer writes among the
// manifests to create once.
//
//go:embed crd.yaml
var CRD []byte
