#!/bin/sh
# The stand-in PostgreSQL image's entry point (postgres-stand-in.Containerfile): on an empty
# volume, a cluster with POSTGRES_USER (password from POSTGRES_PASSWORD_FILE or
# POSTGRES_PASSWORD) and POSTGRES_DB, as the official image makes; then the server, as postgres.
set -eu
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then cat "$POSTGRES_PASSWORD_FILE" >"$password_file"
  else printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE}" >"$password_file"; fi
  chown postgres "$password_file"
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments
  as_postgres initdb --username="${POSTGRES_USER:-postgres}" --pwfile="$password_file" \
    --auth-local=trust --auth-host=scram-sha-256 ${POSTGRES_INITDB_ARGS:-} >/dev/null
  rm -f "$password_file"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    as_postgres postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE DATABASE "$POSTGRES_DB" OWNER "${POSTGRES_USER:-postgres}";
SQL
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -c listen_addresses='*' "$@"
