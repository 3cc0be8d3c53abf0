#!/usr/bin/env bash
# npm run test:postgres — the whole suite against a throwaway PostgreSQL 15 cluster it starts and removes.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/gateway-pg.XXXXXX)
port=${PG_TEST_PORT:-$((40000 + RANDOM % 20000))}
cleanup() { scripts/pg-cluster.sh stop "$dir" || true; }
trap cleanup EXIT
url=$(scripts/pg-cluster.sh start "$dir" "$port")
echo "PostgreSQL test cluster at $url"
TEST_DATABASE_URL="$url" npx vitest run "$@"
