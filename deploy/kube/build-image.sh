#!/usr/bin/env bash
# Builds the image deploy/kube/charly.yaml runs: deploy/kube/Containerfile over a rootfs of
# the charly binary and the shared libraries `ldd` lists for it (FROM scratch: no shell).
#
# The image is tagged localhost/charly-mcp:<first 12 hex digits of sha256(binary + Containerfile)>
# and localhost/charly-mcp:latest; when the tag for this binary exists, nothing is built (a
# second run takes well under a second). No other image is ever removed: other
# localhost/charly-mcp:<hash> tags may be another checkout's or another user's (remove old ones
# yourself with `podman rmi localhost/charly-mcp:<hash>`).
#
# Usage: deploy/kube/build-image.sh [BINARY]   (default: target/release/charly, else target/debug/charly)
# Prints the image reference it built or found.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
bin="${1:-}"
if [[ -z "$bin" ]]; then
  for candidate in "$target/release/charly" "$target/debug/charly"; do
    if [[ -x "$candidate" ]]; then bin="$candidate"; break; fi
  done
fi
if [[ -z "$bin" || ! -x "$bin" ]]; then
  echo "build-image: no charly binary (build one: cargo build --release -p charly-cli, or pass its path)" >&2
  exit 2
fi
command -v podman >/dev/null || { echo "build-image: podman is missing (scripts/runtimes.sh installs it)" >&2; exit 2; }

hash="$(cat "$bin" "$here/Containerfile" | sha256sum | cut -c1-12)"
image="localhost/charly-mcp:$hash"
if podman image exists "$image"; then
  podman tag "$image" localhost/charly-mcp:latest
  echo "$image"
  exit 0
fi

ctx="$(mktemp -d "${TMPDIR:-/tmp}/charly-image.XXXXXX")"
trap 'rm -rf "$ctx"' EXIT
rootfs="$ctx/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
cp "$bin" "$rootfs/usr/local/bin/charly"
# Every library ldd resolves (`name => /path (addr)`), plus the dynamic loader (`/path (addr)`).
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
cp "$here/Containerfile" "$ctx/Containerfile"
podman build --quiet --label "ai.opencharly.binary-sha=$hash" -t "$image" -t localhost/charly-mcp:latest "$ctx" >&2
echo "$image"
