#!/usr/bin/env bash
# make-root.sh SUITE DIR [MIRROR]: a Debian tree of SUITE (trixie: Pacemaker 3.0, pcs 0.12,
# Corosync 3.1.9) with the HA stack the cluster harness's nodes run, made as the lab base is made
# (debootstrap's minbase), then the stack through apt inside it, as a node's packages come.
# test/cluster mounts its /usr over the nodes' (TNF_HA_ROOT): every binary, library and Python
# module a node runs is then the tree's, none the host's. Written whole into DIR.tmp, then
# renamed: an interrupted run leaves no DIR.
set -euo pipefail
suite=$1 dir=$2 mirror=${3:-http://deb.debian.org/debian}
# What the nodes run of the stack, as ci/install-deps.sh installs it on the host for Debian 12.
# fence-agents is all of them (cloud SDKs: 2 GB); the layer runs fence_redfish alone.
# prometheus-hacluster-exporter: the metrics the layer serves are compared with its (TestMetrics).
# iproute2: the etcd agent ends the connections to a fenced peer's etcd with its ss, as on RHCOS.
packages="pacemaker pacemaker-cli-utils corosync pcs fence-agents-redfish resource-agents libxml2-utils procps iproute2 prometheus-hacluster-exporter"
tmp=$dir.tmp
rm -rf "$tmp"
debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1 || { tail -20 "$tmp.log"; exit 1; }
# No service starts inside the tree (invoke-rc.d asks policy-rc.d; 101: not allowed).
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod 755 "$tmp/usr/sbin/policy-rc.d"
mount -t proc proc "$tmp/proc"
trap 'umount "$tmp/proc" 2>/dev/null || true' EXIT
# shellcheck disable=SC2086 # one word per package
chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >>"$tmp.log" 2>&1 ||
	{ tail -20 "$tmp.log"; exit 1; }
chroot "$tmp" apt-get clean
umount "$tmp/proc"
trap - EXIT
rm "$tmp/usr/sbin/policy-rc.d" "$tmp.log"
chroot "$tmp" dpkg-query -W -f '${Package} ${Version}\n' pacemaker corosync pcs fence-agents-redfish resource-agents >"$tmp/ha-stack.versions"
rm -rf "$dir"
mv -T "$tmp" "$dir"
cat "$dir/ha-stack.versions"
