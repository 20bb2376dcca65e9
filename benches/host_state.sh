#!/usr/bin/env bash
# Whole-process figures for the host-state leaves that scripts and aliases call on every run
# (issue 13: budget ≤ 20 ms each):
#
#   charly settings get bind_address          config.yml + environment, no credential store
#   charly settings get vnc.password.web      config backend lookup (no session bus)
#   charly secrets get charly/secret api_token   open the KDBX 4 file (Argon2id KDF) and read one entry
#
# Run against the release binary, in a temporary HOME / XDG_CONFIG_HOME, with hyperfine
# (Debian package, installed by scripts/runtimes.sh):
#
#   cargo build --release -p charly-cli && benches/host_state.sh [RUNS]
#
# Prints hyperfine's table and one `name mean ± sd (min … max)` line per command.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
charly="${CHARLY:-$root/target/release/charly}"
runs="${1:-100}"
[[ -x "$charly" ]] || { echo "no release binary at $charly: cargo build --release -p charly-cli" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed: sudo scripts/runtimes.sh" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cfg" "$work/proj"
export HOME="$work/home" XDG_CONFIG_HOME="$work/cfg" CHARLY_KDBX_PASSWORD=bench-password CHARLY_KDBX_CACHE=false
unset DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR
cd "$work/proj"

"$charly" secrets init >/dev/null
"$charly" secrets set charly/secret api_token tok-bench >/dev/null
"$charly" settings set vnc.password.web vnc-bench >/dev/null
"$charly" settings set run_mode direct >/dev/null
[[ "$("$charly" secrets get charly/secret api_token)" == tok-bench ]]

hyperfine --shell=none --warmup 5 --runs "$runs" --export-json "$work/figures.json" \
  -n "settings get bind_address" "$charly settings get bind_address" \
  -n "settings get vnc.password.web" "$charly settings get vnc.password.web" \
  -n "secrets get charly/secret api_token" "$charly secrets get charly/secret api_token"

python3 - "$work/figures.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    ms = lambda s: f"{s * 1000:.1f} ms"
    print(f"{r['command']}: {ms(r['mean'])} ± {ms(r['stddev'])} ({ms(r['min'])} … {ms(r['max'])}), budget 20 ms")
PY
