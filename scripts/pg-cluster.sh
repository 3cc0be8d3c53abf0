#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 and prints its URL, or stops one.
#   scripts/pg-cluster.sh start DIR [PORT]   -> prints postgresql://postgres@127.0.0.1:PORT/postgres
#   scripts/pg-cluster.sh stop DIR
# PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user.
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?data dir}; port=${3:-55432}
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$bin/initdb" ]; then
  echo "PostgreSQL server binaries missing: installing Debian's postgresql" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
      -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off" start >/dev/null
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2 ;;
esac
