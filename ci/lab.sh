#!/bin/bash
# The main job on the lab default, as `make lab` runs it: a real registry (Debian's
# docker-registry) on loopback, the Debian 12 lab base, then ci/build-layer.sh with the lab
# layer: build and push to that registry, verify, write the manifests, including the node
# configuration MachineConfig from out/lab-cluster/tnf.yaml (made here, with random BMC
# passwords, the first time). The registry is stopped at the end; its data stays in out/registry.
#
# Environment: LAB_REGISTRY (default 127.0.0.1:5000), STORE (default /var/lib/tnf-layer/storage).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/out
addr=${LAB_REGISTRY:-127.0.0.1:5000}
host=${addr%:*} port=${addr##*:}
began=$SECONDS

# A port in use would be someone else's registry (or not a registry at all).
if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
	echo "ci/lab.sh: $addr is in use; set LAB_REGISTRY=127.0.0.1:PORT" >&2
	exit 1
fi
mkdir -p "$out/registry"
cat >"$out/registry/config.yml" <<EOF
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $out/registry/data}}
http: {addr: $addr}
EOF
echo "== registry on $addr (docker-registry, data in out/registry)"
docker-registry serve "$out/registry/config.yml" >"$out/registry/log" 2>&1 &
registry=$!
trap 'kill "$registry" 2>/dev/null; wait "$registry" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then break; fi
	kill -0 "$registry" 2>/dev/null || { cat "$out/registry/log" >&2; exit 1; }
	sleep 0.1
done

# The lab's node configuration: the emulator's BMCs as the QEMU guests see them (10.0.2.2).
# The emulator makes a new self-signed certificate at each start: no certificate to verify or
# pin, so the lab skips the check by name (never do that on a site's network: whoever answers at
# a BMC's address would get its password and could fence a node that runs).
cluster=$out/lab-cluster
if [ ! -f "$cluster/tnf.yaml" ]; then
	mkdir -p "$cluster"
	chmod 700 "$cluster"
	for n in node1 node2; do
		(umask 077 && head -c 18 /dev/urandom | base64 >"$cluster/$n.password")
	done
	cat >"$cluster/tnf.yaml" <<'EOF'
clusterName: lab
nodes:
- {name: node1, ip: 192.168.122.11, bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/1", username: admin, passwordFile: node1.password, certificateVerification: Disabled, insecureSkipCertificateCheck: true}}
- {name: node2, ip: 192.168.122.12, bmc: {address: "redfish+https://10.0.2.2:8443/redfish/v1/Systems/2", username: admin, passwordFile: node2.password, certificateVerification: Disabled, insecureSkipCertificateCheck: true}}
# The lab runs no Kubernetes API: no Node to taint after a fencing.
outOfService: {disabled: true}
# The lab's etcd is the Debian package's, run directly without certificates, on the lab's own
# network: a test setting no site uses (the RHCOS layers run the release's etcd with its TLS).
resources: {etcd: {insecure_plaintext: "true"}}
EOF
fi

# The lab's nodes have no API to fetch Secrets from: their secrets come in the MachineConfig.
REGISTRY=$addr/tnf/layer MATRIX=lab TLS_VERIFY=false ARTIFACTS=$out TNF_CLUSTER=$cluster/tnf.yaml SECRETS_IN=machineconfig \
	BUILD_LAYER=${BUILD_LAYER:-$repo/bin/build-layer} "$repo/ci/build-layer.sh"
echo "== done in $((SECONDS - began)) s: out/lab/build.json, out/lab/verify.json, out/lab/manifests/"
