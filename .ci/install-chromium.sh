#!/usr/bin/env bash
# Installs Debian's Chromium for the share-page screenshot test (test/share-page.test.ts).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (CI runs as root).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "installed: $(/usr/bin/chromium --version)"
