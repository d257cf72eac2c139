// Package apisecrets fetches the node's secrets from the cluster's API (the BMC credentials in
// the fencing-credentials Secrets the installer and the cluster-etcd-operator use, the Corosync
// key, the metrics endpoint's serving certificate) into root-only files, so that no secret
// travels in a MachineConfig and a cold boot never needs the API.
package apisecrets

import "github.com/tnf-layer/tnf-layer/internal/clusterconfig"

// Kubeconfig is the node's credential for the API: a token of the node's own ServiceAccount
// (openshift-etcd/tnf-node-<node>), which may get the layer's Secrets by name, review tokens and
// access (the metrics endpoint's callers), renew its own token and taint its peer, nothing else. An administrator copies it to each node over SSH.
const Kubeconfig = clusterconfig.NodeKubeconfig

// Namespace holds the Secrets: the installer's fencing credentials live there.
const Namespace = clusterconfig.SecretsNamespace
