#!/usr/bin/env bash
# Installs Podman, runc and mmdebstrap for the container image test (test/container.test.ts,
# ../shared/design/containers.md). Idempotent: does nothing when all three are there. Needs root.
set -euo pipefail
if command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null; then
  echo "podman already installed: $(podman --version)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq podman runc mmdebstrap >/dev/null
echo "installed: $(podman --version)"
