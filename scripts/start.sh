#!/bin/sh
# The server as it runs in production, for `npm start` and for every test, soak and tool that
# starts a real server process, so that what they measure is what runs; with the argument
# `migrate`, `npm run db:migrate` (scripts/migrate.ts deploy), with `dump FILE`,
# `npm run db:dump -- FILE` (scripts/db-dump.ts), and with `blobs-migrate`, `npm run blobs:migrate`
# (scripts/blobs-migrate.ts), under the same node, in the image too.
# RUN_COMPILED=true runs the compiled JavaScript under dist/ (`npm run build`) with plain node, as
# the container image does; otherwise the sources through tsx. Never chosen by whether dist/
# exists, which may be older than the sources.
# MALLOC_ARENA_MAX=1 (unless set): glibc otherwise gives threads their own malloc arenas, which
# keep what they once held (about 70 MB idle, and 130 MB more growth while a 1 GB archive is
# processed: test/process/large-archive.test.ts). MALLOC_TRIM_THRESHOLD_ (unless set): glibc
# otherwise raises its trim threshold to twice the largest block it ever freed, and keeps that much
# of the start's WebAssembly compilation (tens of MB) at an idle server's heap top
# (bench/notes/start-footprint.md). A capped young generation
# (V8 sizes it from the machine's memory: 128 MB on 24 GB), and --expose-gc for one collection
# of the start-up's garbage once the server is up (main.ts). `exec`: the server is this process,
# so a signal sent to it, to npm or to the group reaches it. NODE names another node binary.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-1}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
entry=src/main.ts
case "${1:-}" in
  migrate)
    entry=scripts/migrate.ts
    set -- deploy
    ;;
  dump)
    entry=scripts/db-dump.ts
    shift
    ;;
  blobs-migrate)
    entry=scripts/blobs-migrate.ts
    shift
    ;;
  *) set -- ;;
esac
case "${RUN_COMPILED:-false}" in
  true)
    compiled="dist/${entry%.ts}.js"
    if [ ! -f "$compiled" ]; then
      echo "RUN_COMPILED=true but $compiled does not exist: run npm run build first" >&2
      exit 1
    fi
    exec "${NODE:-node}" --max-semi-space-size=8 --expose-gc "$compiled" "$@"
    ;;
  false) exec "${NODE:-node}" --import tsx --max-semi-space-size=8 --expose-gc "$entry" "$@" ;;
  *)
    echo "RUN_COMPILED must be true or false, not '$RUN_COMPILED'" >&2
    exit 1
    ;;
esac
