#!/bin/bash
# What a CI job runs to publish the layer: for each entry of the matrix, build it and push it to
# $REGISTRY, verify the pushed image, and keep the manifests and the JSON summaries as artifacts.
# Any failure fails the job and names the step. (.ci/run is the project's test entry, not this.)
#
# Environment:
#   REGISTRY            repository to push to, e.g. quay.io/example/tnf-layer (required)
#   REGISTRY_AUTH_FILE  its credentials (containers-auth.json format); default: the usual places
#   MATRIX              releases (4.19) or layer names (lab), space separated; default: 4.19
#   ARTIFACTS           output folder; default: ./artifacts
#   TNF_CLUSTER         tnf.yaml for the node configuration MachineConfig (optional)
#   INSTALL_CONFIG      or an install-config.yaml with controlPlane.fencing.credentials, and
#   NODE_IPS            its nodes' addresses, "NAME=IP NAME=IP"
#   SECRETS_IN          secret (default: the BMC passwords and the Corosync key as Secrets the
#                       nodes fetch through the API) or machineconfig (a lab without an API)
#   RELEASE_IMAGE       the exact release payload to build for (needed for a release entry:
#                       build-layer does not guess the z-stream the image's label names)
#   ARCH                the target architecture, GOARCH (default: this machine's)
#   ROLLOUT             out-of-cluster (default: a MachineConfig with the layer as osImageURL) or
#                       on-cluster (a MachineOSConfig and the two-node-ha extension MachineConfig)
#   PUSH_SPEC           on-cluster: MachineOSConfig renderedImagePushSpec; default: $REGISTRY:<entry>-rendered
#   PUSH_SECRET         on-cluster: MachineOSConfig renderedImagePushSecret; default: tnf-layer-push
#   PULL_SECRET         on-cluster: MachineOSConfig baseImagePullSecret (optional)
#   TLS_VERIFY          false for a registry without TLS (a loopback one); default: true
#   STORE               the build's image store; default: /var/lib/tnf-layer/storage
#   BUILD_LAYER         the build-layer binary; default: bin/build-layer, built with make build
# Needs jq (the summaries are JSON).
# Output: $ARTIFACTS/<entry>/{build.json,verify.json,manifests/}.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
step=setup
trap 'rc=$?; if [ $rc -ne 0 ]; then echo "ci/build-layer.sh: FAILED in step \"$step\" (exit $rc)" >&2; fi' EXIT

: "${REGISTRY:?REGISTRY: the repository to push to, e.g. quay.io/example/tnf-layer}"
MATRIX=${MATRIX:-4.19}
ARTIFACTS=${ARTIFACTS:-$PWD/artifacts}
TLS_VERIFY=${TLS_VERIFY:-true}
STORE=${STORE:-/var/lib/tnf-layer/storage}
PUSH_SECRET=${PUSH_SECRET:-tnf-layer-push}
ROLLOUT=${ROLLOUT:-out-of-cluster}

common=(--tls-verify="$TLS_VERIFY")
if [ -n "${REGISTRY_AUTH_FILE:-}" ]; then
	[ -r "$REGISTRY_AUTH_FILE" ] || { echo "REGISTRY_AUTH_FILE: $REGISTRY_AUTH_FILE is not readable" >&2; exit 2; }
	common+=(--authfile "$REGISTRY_AUTH_FILE")
fi

if [ -z "${BUILD_LAYER:-}" ]; then
	step="compile build-layer"
	echo "== $step"
	make -C "$repo" --no-print-directory build >/dev/null
	BUILD_LAYER=$repo/bin/build-layer
fi

for entry in $MATRIX; do
	if [[ $entry =~ ^[0-9]+\.[0-9]+$ ]]; then
		select=(--ocp "$entry") tag=ocp-$entry
	else
		select=(--layer "$entry") tag=$entry
	fi
	out=$ARTIFACTS/$tag
	rm -rf "$out"
	mkdir -p "$out"
	manifests=(--emit-manifests "$out/manifests" --rollout "$ROLLOUT")
	if [ "$ROLLOUT" = on-cluster ]; then
		manifests+=(--push-spec "${PUSH_SPEC:-$REGISTRY:$tag-rendered}" --push-secret "$PUSH_SECRET")
		if [ -n "${PULL_SECRET:-}" ]; then
			manifests+=(--base-image-pull-secret "$PULL_SECRET")
		fi
	fi
	manifests+=(--secrets-in "${SECRETS_IN:-secret}")
	if [ -n "${TNF_CLUSTER:-}" ]; then
		manifests+=(--node-config "$TNF_CLUSTER")
	fi
	if [ -n "${INSTALL_CONFIG:-}" ]; then
		manifests+=(--install-config "$INSTALL_CONFIG")
		for kv in ${NODE_IPS:-}; do manifests+=(--node-ip "$kv"); done
	fi
	inputs=()
	if [ -n "${RELEASE_IMAGE:-}" ]; then inputs+=(--release-image "$RELEASE_IMAGE"); fi
	if [ -n "${ARCH:-}" ]; then inputs+=(--arch "$ARCH"); fi

	if [ "$tag" = lab ]; then
		step="$tag: lab base"
		echo "== $step"
		"$BUILD_LAYER" lab-base --store "$STORE"
	fi

	step="$tag: build and push"
	echo "== $step"
	"$BUILD_LAYER" build "${select[@]}" --source "$repo" --store "$STORE" --push "docker://$REGISTRY:$tag" \
		"${inputs[@]}" "${common[@]}" "${manifests[@]}" -o json >"$out/build.json.tmp"
	mv "$out/build.json.tmp" "$out/build.json"
	pushed=$(jq -er '.pushed | ltrimstr("docker://")' "$out/build.json")
	version=$(jq -er .version "$out/build.json")

	step="$tag: verify"
	echo "== $step $pushed"
	"$BUILD_LAYER" verify "${select[@]}" --layer-version "$version" "${common[@]}" -o json "docker://$pushed" >"$out/verify.json.tmp"
	mv "$out/verify.json.tmp" "$out/verify.json"
	added=$(jq -er .addedBytes "$out/build.json")
	echo "$tag: $pushed (version $version, adds $((added / 1048576)) MiB over the base) verified; artifacts in $out"
done
step=done
