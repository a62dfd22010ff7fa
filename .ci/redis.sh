#!/usr/bin/env bash
# Redis for the rate-limit tests on it (docs/decisions/0022-several-processes.md): Debian's
# redis-server, started without persistence (a throwaway test server) unless one answers.
# Prints the TEST_REDIS_URL to use. Run as root (CI is); skips what is done.
set -euo pipefail
if ! command -v redis-server >/dev/null; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
fi
port=6379
if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >&2
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
echo "redis://127.0.0.1:$port/15"
