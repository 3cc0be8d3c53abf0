#!/usr/bin/env bash
# npm run test:pgbouncer — the PostgreSQL suite (or the files named) with every test database's
# DATABASE_URL through Debian's PgBouncer in transaction pooling mode and DATABASE_DIRECT_URL on the
# server itself, as docs/operations.md (PgBouncer) deploys it. Both are throwaway, on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pgbouncer >/dev/null; then
  echo "pgbouncer missing: installing Debian's pgbouncer" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer) >&2
fi
dir=$(mktemp -d /tmp/gateway-pgb.XXXXXX)
chmod 755 "$dir"
pg_port=${PG_TEST_PORT:-$((40000 + RANDOM % 10000))}
bouncer_port=$((50000 + RANDOM % 10000))
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  if [ -f "$dir/bouncer/pgbouncer.pid" ]; then kill "$(cat "$dir/bouncer/pgbouncer.pid")" 2>/dev/null || true; fi
  scripts/pg-cluster.sh stop "$dir/pg" || true
  rm -rf "$dir"
}
trap cleanup EXIT
url=$(scripts/pg-cluster.sh start "$dir/pg" "$pg_port")
mkdir -p "$dir/bouncer"
echo '"postgres" ""' >"$dir/bouncer/users.txt"
# every database passes (tests make their own), every user as the cluster lets it in (trust); the
# pooled sessions carry the statement timeout as docs/operations.md (PgBouncer) says
cat >"$dir/bouncer/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$pg_port connect_query='SET statement_timeout = 15000'
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = trust
auth_file = $dir/bouncer/users.txt
pool_mode = transaction
default_pool_size = 20
max_client_conn = 2000
server_idle_timeout = 5
logfile = $dir/bouncer/pgbouncer.log
pidfile = $dir/bouncer/pgbouncer.pid
INI
if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir/bouncer"; fi
as_pg pgbouncer -d "$dir/bouncer/pgbouncer.ini"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$bouncer_port") 2>/dev/null && break; sleep 0.1; done
echo "PostgreSQL test cluster at $url, PgBouncer (transaction mode) in front of it on port $bouncer_port"
TEST_DATABASE_URL="$url" TEST_PGBOUNCER_URL="postgresql://postgres@127.0.0.1:$bouncer_port/postgres" npx vitest run "$@"
