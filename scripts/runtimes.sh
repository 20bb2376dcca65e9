#!/usr/bin/env bash
# Installs the real systems charly's tests drive (DESIGN.md "Runtimes"; the verified recipes
# are in RUNTIMES.md of the design notes): Debian packages, idempotently. Called by
# scripts/test before any test runs, so CI gets them on a fresh machine.
#
# Each family adds the packages it needs to PACKAGES (one line per family, with what for), and
# anything that is not a plain `apt-get install` as a function below, called at the end.
#
# Usage: scripts/runtimes.sh          (as root; a no-op when everything is installed)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${CHARLY_RUNTIMES:-$root/.runtimes}"   # private apt configs, extracted .debs (gitignored)
mkdir -p "$state"

PACKAGES=(
  groff-base man-db   # shell: `charly man` renders with `man -l` (tests/terminal.rs)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "runtimes: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "runtimes: Debian packages up to date" >&2
fi

echo "runtimes: ready" >&2
