#!/usr/bin/env bash
# The deploy budgets of issue 14, as figures (not a timed test):
#
#   1. `charly status` with 10 running containers vs `podman ps --format json` alone
#      (budget: charly ≤ 1.5× podman). charly's status is one `podman ps --all --format json
#      --filter label=ai.opencharly.box` plus concurrent loopback probes of every published
#      port (no `podman exec`), so the containers each publish a port that answers (busybox
#      httpd).
#   2. `charly start` of a built box vs the bare `podman run` it issues (budget: ≤ +100 ms).
#      The bare command is the exact argv charly ran, captured by a logging `podman` wrapper
#      on PATH for one start; both sides get a fresh name (the container is removed in
#      hyperfine's --prepare, which is not timed).
#
# Each run is a whole process, as a script or an agent pays it; hyperfine spawns the commands
# without a shell (-N). Containers `charly-bench-*` and image `localhost/bench:latest` are
# removed when the script exits.
#
# Last measured 2026-12-02 (main 109dc01, release build 24,740,352 bytes, N=20, quiet machine):
# podman ps --format json 38.5 ms, charly status 46.4 ms (1.21x), status --json 45.5 ms
# (1.18x); bare podman run 189.1 ms, charly start 245.5 ms (+56.4 ms; +92.8 ms before start
# asked for the image and the container together). Medians.
#
# Usage: scripts/bench-deploy.sh              (N=20 runs, 3 warm-ups; release build)
#        N=50 scripts/bench-deploy.sh
#        SKIP_BUILD=1 ...                     (use target/release/charly as it is)
#        SKIP_BUILD=1 CHARLY_BIN=target/debug/charly ...   (another binary)
# Needs: podman with localhost/charly-busybox (scripts/runtimes.sh, as root), hyperfine, python3.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${N:-20}"
WARMUP="${WARMUP:-3}"
target="${CARGO_TARGET_DIR:-$root/target}"
charly="${CHARLY_BIN:-$target/release/charly}"

die() { echo "bench-deploy: $*" >&2; exit 2; }
command -v hyperfine >/dev/null || die "hyperfine is missing (apt-get install hyperfine)"
podman image exists localhost/charly-busybox:latest || die "no localhost/charly-busybox: run scripts/runtimes.sh as root"
if [[ -z "${SKIP_BUILD:-}" ]]; then
  (cd "$root" && cargo build --release --locked -p charly-cli >&2)
fi
[[ -x "$charly" ]] || die "no $charly (build it, or unset SKIP_BUILD)"

work="$(mktemp -d)"
names=()
cleanup() {
  ((${#names[@]})) && podman rm --force --time 0 "${names[@]}" >/dev/null 2>&1 || true
  podman rm --force --time 0 charly-bench-start >/dev/null 2>&1 || true
  podman rmi --force localhost/bench:latest >/dev/null 2>&1 || true
  podman image prune --force --filter label=ai.opencharly.box=bench >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

cd "$work"
"$charly" box new project . >/dev/null
"$charly" box new box bench --base localhost/charly-busybox:latest >/dev/null
"$charly" box build bench >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

for i in $(seq 1 10); do
  names+=("charly-bench-$i")
  "$charly" start bench -i "$i" -p "$(free_port):80" -- httpd -f -p 80 -h /www >/dev/null
done
running="$(podman ps --format '{{.Names}}' | grep -c '^charly-bench-' || true)"
[[ "$running" == 10 ]] || die "expected 10 running bench containers, found $running"

median() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; [print("%s\t%.1f" % (x["command"], sorted(x["times"])[len(x["times"])//2]*1000)) for x in r]' "$1"; }

echo "== status: 10 running containers (N=$N)" >&2
hyperfine -N --style basic --warmup "$WARMUP" --runs "$N" --export-json "$work/status.json" \
  -n 'podman ps --format json' 'podman ps --format json' \
  -n 'charly status' "$charly status" \
  -n 'charly status --json' "$charly status --json" >&2
median "$work/status.json" >"$work/status.tsv"

echo "== start vs the bare podman run it issues (N=$N)" >&2
# One start through a logging wrapper: the exact `podman run` argv charly issues.
mkdir -p "$work/wrap"
real_podman="$(command -v podman)"
cat >"$work/wrap/podman" <<WRAP
#!/usr/bin/env bash
if [[ "\$1" == run ]]; then printf '%q ' "\$@" >"$work/run-argv"; fi
exec "$real_podman" "\$@"
WRAP
chmod +x "$work/wrap/podman"
PATH="$work/wrap:$PATH" "$charly" start bench -i start >/dev/null
podman rm --force --time 0 charly-bench-start >/dev/null
bare="podman $(cat "$work/run-argv")"
hyperfine -N --style basic --warmup "$WARMUP" --runs "$N" --export-json "$work/start.json" \
  --prepare 'podman rm --force --time 0 charly-bench-start' \
  -n 'bare podman run' "$bare" \
  -n 'charly start' "$charly start bench -i start" >&2
median "$work/start.json" >"$work/start.tsv"

python3 - "$work/status.tsv" "$work/start.tsv" <<'PY'
import sys
status = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[1]))
start = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[2]))
ps, st, sj = (float(status[k]) for k in ("podman ps --format json", "charly status", "charly status --json"))
bare, cs = float(start["bare podman run"]), float(start["charly start"])
print("median wall time, ms")
print(f"  podman ps --format json        {ps:7.1f}")
print(f"  charly status (10 running)     {st:7.1f}   {st/ps:.2f}x   budget <= 1.5x  {'ok' if st <= 1.5*ps else 'OVER'}")
print(f"  charly status --json           {sj:7.1f}   {sj/ps:.2f}x")
print(f"  bare podman run (charly's argv){bare:7.1f}")
print(f"  charly start                   {cs:7.1f}   {cs-bare:+.1f} ms  budget <= +100 ms  {'ok' if cs-bare <= 100 else 'OVER'}")
PY
