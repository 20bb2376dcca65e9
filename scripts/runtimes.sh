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
  # host state (issue 13): gpg 2.2 for secrets.gpg.*; a private D-Bus session bus with
  # gnome-keyring-daemon as the Secret Service provider of the keyring backend; keepassxc-cli
  # as the second, independent reader of the KDBX files charly writes; keyctl to look at the
  # kernel keyring cache; secret-tool to read the keyring independently; hyperfine for the
  # settings.get / secrets.get process benchmark; podman for alias.*'s image lookups (images
  # imported into a storage under the test directory, nothing is run)
  gnupg dbus gnome-keyring libsecret-tools keepassxc keyutils hyperfine podman
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

# udevadm 254 from bookworm-backports (bookworm's 252 has no `udevadm verify`): the .debs are
# downloaded with a private APT configuration (/etc/apt is not touched) and extracted under
# $state/udev; $state/udev/bin/udevadm runs that build. Tests verify every rules file charly
# writes with it (CHARLY_UDEVADM names another one).
udevadm_backports() {
  local dir="$state/udev"
  local apt="$dir/apt"
  if [[ -x "$dir/bin/udevadm" ]] && "$dir/bin/udevadm" --version 2>/dev/null | grep -qE '^(25[4-9]|2[6-9][0-9])'; then
    echo "runtimes: udevadm $("$dir/bin/udevadm" --version) (bookworm-backports) ready" >&2
    return
  fi
  local uri
  uri="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  [[ -n "$uri" ]] || uri="$(awk '/^deb / && !/security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
  if [[ -z "$uri" ]]; then
    echo "runtimes: no Debian mirror in /etc/apt to fetch bookworm-backports from" >&2
    return 1
  fi
  rm -rf "${dir:?}"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/none" "$dir/debs" "$dir/root" "$dir/bin"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm-backports main" >"$apt/sources.list"
  {
    echo "Dir::Etc::SourceList \"$apt/sources.list\";"
    echo "Dir::Etc::SourceParts \"$apt/none\";"
    echo "Dir::State::Lists \"$apt/lists\";"
    echo "Dir::Cache \"$apt/cache\";"
  } >"$apt/apt.conf"
  echo "runtimes: udevadm from bookworm-backports into $dir" >&2
  APT_CONFIG="$apt/apt.conf" apt-get update -qq
  (cd "$dir/debs" && APT_CONFIG="$apt/apt.conf" apt-get download -qq -t bookworm-backports udev libsystemd-shared)
  local deb
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  {
    echo '#!/bin/sh'
    echo "LD_LIBRARY_PATH='$dir/root/usr/lib/x86_64-linux-gnu/systemd' exec '$dir/root/bin/udevadm' \"\$@\""
  } >"$dir/bin/udevadm"
  chmod 755 "$dir/bin/udevadm"
  echo "runtimes: udevadm $("$dir/bin/udevadm" --version) (bookworm-backports) ready" >&2
}
udevadm_backports

echo "runtimes: ready" >&2
