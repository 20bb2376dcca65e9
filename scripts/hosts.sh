#!/usr/bin/env bash
# Installs the pinned MCP host CLIs whose own `mcp list` commands the tests run against the
# config files `charly mcp install` writes (charly-cli/tests/hosts). Idempotent, like peers.sh,
# into .peers/hosts (gitignored; CHARLY_PEERS moves it). None of them is logged in: the tests
# only ask each CLI to read its config, with HOME pointing at a temporary directory.
#
#   .peers/hosts/node_modules/.bin/claude   @anthropic-ai/claude-code  (`claude mcp list`)
#   .peers/hosts/node_modules/.bin/gemini   @google/gemini-cli         (`gemini mcp list`)
#   .peers/hosts/node_modules/.bin/codex    @openai/codex              (`codex mcp list`)
#
# Usage: scripts/hosts.sh        (from anywhere inside the repository)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="${CHARLY_PEERS:-$root/.peers}"
dir="$peers/hosts"

HOST_PKGS=(
  "@anthropic-ai/claude-code@2.1.328"
  "@google/gemini-cli@0.61.0"
  "@openai/codex@0.169.0"
)

installed_version() { # $1 = package name; prints the installed version or nothing
  local pj="$dir/node_modules/$1/package.json"
  [[ -f "$pj" ]] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

want=()
for spec in "${HOST_PKGS[@]}"; do
  name="${spec%@*}" version="${spec##*@}"
  [[ "$(installed_version "$name")" == "$version" ]] || want+=("$spec")
done

mkdir -p "$dir"
if ((${#want[@]})); then
  [[ -f "$dir/package.json" ]] || echo '{"name":"charly-hosts","private":true}' >"$dir/package.json"
  echo "hosts: npm install ${want[*]}" >&2
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "${want[@]}")
else
  echo "hosts: host CLIs up to date" >&2
fi
echo "hosts: ready in $dir" >&2
