#!/usr/bin/env bash
# The container image, built from the repository's Dockerfile unchanged and run (CONTRACT §7.5,
# §7.1): it starts on an empty /data, answers /livez and its own HEALTHCHECK, takes a case write
# and a ZIP multimedia upload that completes, runs as a non-root user, stops within
# SHUTDOWN_GRACE_SECONDS + 5 s with status 0 on SIGTERM, its `npm run db:dump` writes the stopped
# server's database as SQL, and its `npm run db:migrate` migrates a new data directory. One PASS or FAIL line per check; exits 1 on any failure.
# No registry is reachable here: the base image is a local stand-in (build-base.sh), and the image
# is built and run with buildah (`podman run` fails on these machines; /work/shared/STACK.md).
# Run as root: `bash scripts/container/test-image.sh` (.ci/run runs it as a step of its own).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
IMAGE=gateway
started=$(date +%s)
failures=0

pass() { echo "PASS $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
elapsed() { echo "$(($(date +%s) - started)) s"; }

if [ "$(id -u)" != 0 ]; then
  echo "FAIL test-image.sh needs root (buildah, mmdebstrap)"
  exit 1
fi
if ! command -v buildah >/dev/null || ! command -v podman >/dev/null || ! command -v mmdebstrap >/dev/null; then
  echo "installing buildah, podman and mmdebstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah mmdebstrap podman >/dev/null
fi

bash "$here/build-base.sh"
echo "base ready after $(elapsed)"

work=$(mktemp -d)
containers=()
server=
cleanup() {
  [ -n "$server" ] && kill -KILL "$server" 2>/dev/null || true
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
[ -n "${KEEP_WORK:-}" ] && cleanup() { echo "kept $work"; }
trap cleanup EXIT
# a timeout's TERM still removes the containers and the server
trap 'exit 143' TERM INT

# The two mounts give RUN steps this machine's route to the npm registry; nothing of them stays
# in the image. --format docker: the OCI image format has no HEALTHCHECK. --layers: a step whose
# inputs are unchanged (the dependencies, while package-lock.json is) is reused from the last build.
mounts=()
[ -d /etc/ssl/certs ] && mounts+=(-v /etc/ssl/certs:/etc/ssl/certs:ro)
[ -f /etc/npmrc ] && mounts+=(-v /etc/npmrc:/usr/local/etc/npmrc:ro)
if buildah bud --isolation chroot --pull=never --layers --format docker "${mounts[@]}" -t "$IMAGE" "$root" >"$work/build.log" 2>&1; then
  pass "the image builds from the Dockerfile ($(elapsed))"
else
  fail "the image does not build:"
  tail -40 "$work/build.log"
  exit 1
fi

# the image's CMD and HEALTHCHECK, spelled out for `buildah run`, which does not run them itself
config() {
  buildah inspect --type image "$IMAGE" | node -e "const { config } = JSON.parse(require('fs').readFileSync(0)).Docker; for (const a of $1) console.log(a)"
}
mapfile -t cmd < <(config config.Cmd)
mapfile -t healthcheck < <(config 'config.Healthcheck.Test.slice(1)')
echo "CMD: ${cmd[*]}"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
GATEWAY=http://127.0.0.1:$port

# a new working container of the image, in $container
new_container() {
  container=$(buildah from --pull=never "$IMAGE")
  containers+=("$container")
}
# A container shares the host's network under buildah: listen on loopback only. `/data/` with
# its slash: buildah run mounts the image's VOLUME /data over a bind mount on `/data` exactly.
in_container() {
  local c=$1 data=$2
  shift 2
  buildah run --isolation chroot --user node -v "$data:/data/" --env HOST=127.0.0.1 --env "PORT=$port" \
    --env BOOTSTRAP_ADMIN=admin:change-me "$c" -- "$@"
}

mkdir "$work/data" "$work/data-migrate"
# /data in the image is owned by node (uid 1000); so must a directory mounted over it be
chown 1000:1000 "$work/data" "$work/data-migrate"
new_container
in_container "$container" "$work/data" "${cmd[@]}" >"$work/server.log" 2>&1 &
runner=$!

# the server: the node process under buildah run's (a new embedded database: up to 2 minutes on a
# busy machine)
server=
for _ in $(seq 1 240); do
  server=$(pgrep -f -- "dist/src/main.js" | while read -r pid; do
    p=$pid
    while [ "$p" -gt 1 ]; do
      [ "$p" = "$runner" ] && echo "$pid" && break
      p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || echo 1)
    done
  done | head -1 || true)
  [ -n "$server" ] && curl -fsS "$GATEWAY/livez" >/dev/null 2>&1 && break
  sleep 0.5
done
if [ -n "$server" ] && curl -fsS "$GATEWAY/livez" >/dev/null 2>&1; then
  pass "the container starts on an empty /data and answers /livez ($(elapsed))"
else
  fail "the container did not answer /livez; its output:"
  cat "$work/server.log"
  exit 1
fi

new_container
hc=$container
if in_container "$hc" "$work/data-migrate" "${healthcheck[@]}" >/dev/null 2>&1; then
  pass "the image's HEALTHCHECK command succeeds"
else
  fail "the image's HEALTHCHECK command fails"
fi

# real, effective, saved and file-system uid
uid=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$server/status")
if [ "$uid" = "1000 1000 1000 1000" ] && [ "$(in_container "$hc" "$work/data-migrate" id -un)" = node ]; then
  pass "the server runs as user node (uid $uid)"
else
  fail "the server runs as uid $uid"
fi

# the README's "Try it" steps: a domain and a user, a case, an app, and its media archive
call() { curl -sS --fail-with-body -w '\n' "$@"; }
if call -u admin:change-me -H 'Content-Type: application/json' \
  -d '{"query": "mutation { createDomain(name: \"demo\") { id } createUser(input: {username: \"worker\", password: \"worker-pw\", domain: \"demo\", permissions: [ACCESS_API, EDIT_DATA, EDIT_APPS]}) { id } }"}' \
  "$GATEWAY/graphql" >"$work/setup.json" && ! grep -q '"errors"' "$work/setup.json" &&
  call -u worker:worker-pw -H 'Content-Type: application/json' \
    -d '{"case_type": "visit", "case_name": "Ann", "owner_id": "o1", "properties": {"district": "north"}}' \
    "$GATEWAY/a/demo/api/case/v2/" >/dev/null &&
  call -u worker:worker-pw "$GATEWAY/a/demo/api/case/v2/?case_type=visit" | grep -q '"case_name":"Ann"'; then
  pass "a case is written and read back"
else
  fail "the case write: $(cat "$work/setup.json")"
fi

complete=
call -u worker:worker-pw -F app_file=@"$root/examples/app.json" -F app_name=Clinic \
  "$GATEWAY/a/demo/apps/api/import_app/" >"$work/app.json" 2>&1 || true
app=$(node -pe 'JSON.parse(fs.readFileSync(0)).app_id' <"$work/app.json" 2>/dev/null || true)
call -u worker:worker-pw -F bulk_upload_file=@"$root/examples/media.zip" \
  "$GATEWAY/a/demo/apps/api/$app/multimedia/" >"$work/upload.json" 2>&1 || true
processing=$(node -pe 'JSON.parse(fs.readFileSync(0)).processing_id' <"$work/upload.json" 2>/dev/null || true)
for _ in $(seq 1 60); do
  call -u worker:worker-pw "$GATEWAY/a/demo/apps/api/$app/multimedia/status/$processing/" >"$work/status.json" 2>&1 || true
  if grep -q '"complete":true' "$work/status.json"; then
    complete=yes
    break
  fi
  sleep 0.5
done
if [ -n "$complete" ] && [ -n "$(find "$work/data/blobs" -type f 2>/dev/null)" ]; then
  pass "a ZIP multimedia upload completes, its archive and media stored under /data/blobs"
else
  fail "the ZIP upload did not complete: import $(cat "$work/app.json"); upload $(cat "$work/upload.json"); status $(cat "$work/status.json")"
fi

# §7.1: SIGTERM to the server; gone within the grace (default 10 s) + 5 s, with status 0
kill -TERM "$server"
stop_started=$(date +%s%N)
status=0
timeout 20 tail --pid="$runner" -f /dev/null || true
wait "$runner" || status=$?
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
server=
if [ "$status" = 0 ] && [ "$stop_ms" -le 15000 ] && grep -q '"message":"stopping"' "$work/server.log"; then
  pass "SIGTERM: the server stopped in $stop_ms ms with status 0"
else
  fail "SIGTERM: status $status after $stop_ms ms"
  tail -5 "$work/server.log"
fi

# the way from the embedded database to PostgreSQL starts in the image too (docs/operations.md)
new_container
if in_container "$container" "$work/data" npm run db:dump -- /data/dump.sql >"$work/dump.log" 2>&1 &&
  grep -q '^COPY public.cases ' "$work/data/dump.sql" && grep -q '^COPY public.blob_chunks ' "$work/data/dump.sql"; then
  pass "npm run db:dump in the image writes the stopped server's database and media as SQL"
else
  fail "npm run db:dump in the image:"
  cat "$work/dump.log"
fi

new_container
if in_container "$container" "$work/data-migrate" npm run db:migrate >"$work/migrate.log" 2>&1 && grep -q '^applied: ' "$work/migrate.log" &&
  [ -f "$work/data-migrate/pgdata/PG_VERSION" ]; then
  pass "npm run db:migrate in the image migrates a new data directory"
else
  fail "npm run db:migrate in the image:"
  cat "$work/migrate.log"
fi

echo "image: $(buildah images --format '{{.Size}}' "$IMAGE" 2>/dev/null | head -1)"
echo "container test done in $(elapsed): $failures failure(s)"
[ "$failures" = 0 ]
