#!/bin/sh
# The server as it runs in production, for `npm start` and for every test, soak and tool that
# starts a real server process, so that what they measure is what runs.
# MALLOC_ARENA_MAX=1 (unless set): glibc otherwise gives threads their own malloc arenas, which
# keep what they once held (about 70 MB idle, and 130 MB more growth while a 1 GB archive is
# processed: test/process/large-archive.test.ts). A capped young generation
# (V8 sizes it from the machine's memory: 128 MB on 24 GB), and --expose-gc for one collection
# of the start-up's garbage once the server is up (main.ts). `exec`: the server is this process,
# so a signal sent to it, to npm or to the group reaches it. NODE names another node binary.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-1}"
exec "${NODE:-node}" --import tsx --max-semi-space-size=8 --expose-gc src/main.ts
