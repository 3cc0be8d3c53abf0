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
dir=$(mktemp -d /tmp/gateway-pg.XXXXXX)
port=${PG_TEST_PORT:-$((40000 + RANDOM % 20000))}
cleanup() { scripts/pg-cluster.sh stop "$dir" || true; }
trap cleanup EXIT
url=$(scripts/pg-cluster.sh start "$dir" "$port")
echo "PostgreSQL test cluster at $url"
# the pooler is configured where the tests that start their own configure it (test/helpers/pgbouncer.ts)
TEST_DATABASE_URL="$url" npx tsx scripts/with-pgbouncer.ts "$url" npx vitest run "$@"
