#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need. Go comes with the machine
# (/usr/local/go); Go modules come through the module proxy.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# rpm (rpmbuild) and createrepo-c: the stand-in RHCOS extensions' RPM repository (internal/build/buildlayer).
# prometheus (with promtool) and prometheus-hacluster-exporter: the alert tests and the metrics
# compared with ha_cluster_exporter's (test/cluster). time: the benchmarks' peak memory (test/testproc).
# podman, runc, gojq and busybox-static: OpenShift's own two-node stack on the cluster harness
# (test/cluster/field_test.go: podman-etcd runs etcd in podman, reads JSON with jq, and needs true in its image).
apt-get install -y -qq --no-install-recommends \
	make git ca-certificates jq \
	resource-agents libxml2-utils pacemaker-cli-utils \
	fence-agents qemu-system-x86 qemu-utils docker-registry debootstrap \
	pacemaker corosync pcs iproute2 systemd \
	rpm createrepo-c time \
	prometheus prometheus-hacluster-exporter \
	podman runc gojq busybox-static >/dev/null
# The packages start services on a machine with systemd: a registry on every interface, the
# host's own Corosync/Pacemaker and pcsd, Prometheus and the exporter. The tests run their own (a
# registry on loopback, the cluster nodes in network namespaces), so the packaged services are
# turned off.
if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
	systemctl disable --now docker-registry pcsd pacemaker corosync prometheus prometheus-hacluster-exporter >/dev/null 2>&1 || true
fi
echo "install-deps: done"
