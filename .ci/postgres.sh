#!/usr/bin/env bash
# PostgreSQL for the test suite's run on it (docs/decisions/0015-postgresql.md): Debian's
# package, its cluster started, the postgres role given a password for the tests' TCP logins.
# Prints the TEST_DATABASE_URL to use. A throwaway cluster for tests: no fsync, since the suite
# creates and drops a database for every test server. Run as root (CI is); skips what is done.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
pg_lsclusters -h | grep -q "^$version main" || pg_createcluster "$version" main >&2
pg_lsclusters -h | grep -q "^$version main .* online" || pg_ctlcluster "$version" main start >&2
port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
runuser -u postgres -- psql -q -p "$port" \
  -c "ALTER USER postgres PASSWORD 'postgres'" \
  -c 'ALTER SYSTEM SET fsync = off' \
  -c 'ALTER SYSTEM SET synchronous_commit = off' \
  -c 'ALTER SYSTEM SET full_page_writes = off' \
  -c 'SELECT pg_reload_conf()' >/dev/null
echo "postgres://postgres:postgres@127.0.0.1:$port/postgres"
