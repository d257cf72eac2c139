#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need. Go comes with the machine
# (/usr/local/go); Go modules come through the module proxy.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	make git ca-certificates \
	resource-agents libxml2-utils pacemaker-cli-utils \
	fence-agents qemu-system-x86 >/dev/null
echo "install-deps: done"
