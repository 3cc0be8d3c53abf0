#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 and prints its URL, or stops one.
#   scripts/pg-cluster.sh start DIR [PORT]   -> prints postgresql://postgres@127.0.0.1:PORT/postgres
#   scripts/pg-cluster.sh stop DIR           -> stops it and removes DIR
#   scripts/pg-cluster.sh down DIR           -> stops it (fast shutdown), keeping its data
#   scripts/pg-cluster.sh up DIR [PORT]      -> starts a cluster that `down` stopped, same data
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
run() {
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
    -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off" start >/dev/null
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}
case "$cmd" in
  start)
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
    run
    ;;
  up) run ;;
  down) as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop|down|up DIR [PORT]" >&2; exit 2 ;;
esac
