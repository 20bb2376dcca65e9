#!/usr/bin/env bash
# Whole-process figures for the host-state leaves that scripts and aliases call on every run
# (issue 13: budget ≤ 20 ms each):
#
#   settings get bind_address                 config.yml + environment, no credential store
#   settings get vnc.password.web (kdbx)      `auto` with no session bus picks the configured
#                                             KDBX file: open it (Argon2id 6 MiB x 2), read one entry
#   secrets get charly/secret api_token       the same KDBX open, through the secrets family
#   settings get vnc.password.web (config)    CHARLY_SECRET_BACKEND=config: the plaintext map
#   settings get secret_backend (keyring)     a private session bus with gnome-keyring-daemon:
#                                             the bounded `auto` probe over D-Bus
#   settings get vnc.password.web (keyring)   the same bus: probe, then a Secret Service lookup
#
# Run against the release binary, in a temporary HOME / XDG_CONFIG_HOME, with hyperfine,
# dbus-daemon and gnome-keyring-daemon (Debian packages, installed by scripts/runtimes.sh):
#
#   cargo build --release -p charly-cli && benches/host_state.sh [RUNS]
#
# (CHARLY=target/debug/charly measures the dev build: its unoptimised Argon2 makes the KDBX
# rows about 10 times slower, so the budget is checked on the release build.)
#
# Prints hyperfine's table and one `name mean ± sd (min … max)` line per command.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
charly="${CHARLY:-$root/target/release/charly}"
runs="${1:-100}"
[[ -x "$charly" ]] || { echo "no release binary at $charly: cargo build --release -p charly-cli" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed: sudo scripts/runtimes.sh" >&2; exit 2; }

work="$(mktemp -d)"
bus_pid="" keyring_pid=""
cleanup() {
  [[ -n "$keyring_pid" ]] && kill "$keyring_pid" 2>/dev/null
  [[ -n "$bus_pid" ]] && kill "$bus_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/cfg" "$work/proj" "$work/kr/home" "$work/kr/run"
chmod 700 "$work/kr/run"
export HOME="$work/home" XDG_CONFIG_HOME="$work/cfg" CHARLY_KDBX_PASSWORD=bench-password CHARLY_KDBX_CACHE=false
unset DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR
cd "$work/proj"

"$charly" secrets init >/dev/null
"$charly" secrets set charly/secret api_token tok-bench >/dev/null
"$charly" settings set vnc.password.web vnc-bench >/dev/null     # auto: into the KDBX file
CHARLY_SECRET_BACKEND=config "$charly" settings set vnc.password.web vnc-bench >/dev/null
"$charly" settings set run_mode direct >/dev/null
[[ "$("$charly" secrets get charly/secret api_token)" == tok-bench ]]
[[ "$(CHARLY_SECRET_BACKEND=config "$charly" settings get vnc.password.web)" == vnc-bench ]]

# A private session bus without service directories (nothing is started by activation) and
# gnome-keyring-daemon on it, its login keyring created and unlocked from stdin.
cat >"$work/session.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=$work/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --nofork --nopidfile --print-address=1 --config-file="$work/session.conf" >"$work/bus.addr" &
bus_pid=$!
for _ in $(seq 100); do [[ -s "$work/bus.addr" ]] && break; sleep 0.05; done
bus="$(head -n1 "$work/bus.addr")"
printf 'bench-login' | env -i PATH="$PATH" HOME="$work/kr/home" XDG_RUNTIME_DIR="$work/kr/run" \
  XDG_DATA_HOME="$work/kr/home/.local/share" DBUS_SESSION_BUS_ADDRESS="$bus" \
  gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
keyring_pid=$!
mkdir -p "$work/kr/cfg"
kr() { env XDG_CONFIG_HOME="$work/kr/cfg" DBUS_SESSION_BUS_ADDRESS="$bus" "$@"; }
for _ in $(seq 200); do
  [[ "$(kr "$charly" settings get secret_backend 2>/dev/null)" == keyring ]] && break
  sleep 0.05
done
[[ "$(kr "$charly" settings get secret_backend)" == keyring ]] || { echo "gnome-keyring-daemon did not come up" >&2; exit 1; }
kr "$charly" settings set vnc.password.web vnc-keyring >/dev/null
[[ "$(kr "$charly" settings get vnc.password.web)" == vnc-keyring ]]

hyperfine --shell=none --warmup 5 --runs "$runs" --export-json "$work/figures.json" \
  -n "settings get bind_address" "$charly settings get bind_address" \
  -n "settings get vnc.password.web (kdbx)" "$charly settings get vnc.password.web" \
  -n "secrets get charly/secret api_token" "$charly secrets get charly/secret api_token" \
  -n "settings get vnc.password.web (config)" "env CHARLY_SECRET_BACKEND=config $charly settings get vnc.password.web" \
  -n "settings get secret_backend (keyring)" "env XDG_CONFIG_HOME=$work/kr/cfg DBUS_SESSION_BUS_ADDRESS=$bus $charly settings get secret_backend" \
  -n "settings get vnc.password.web (keyring)" "env XDG_CONFIG_HOME=$work/kr/cfg DBUS_SESSION_BUS_ADDRESS=$bus $charly settings get vnc.password.web"

python3 - "$work/figures.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    ms = lambda s: f"{s * 1000:.1f} ms"
    print(f"{r['command']}: mean {ms(r['mean'])} ± {ms(r['stddev'])}, median {ms(r['median'])} "
          f"({ms(r['min'])} … {ms(r['max'])}), budget 20 ms")
PY
