#!/usr/bin/env bash
# Figures for issue 19 ("Scale-out on a real load balancer"): calls/s of `tools/call version`
# through nginx (deploy/nginx/charly.conf.template) in front of 3 replicas of
# `charly mcp serve --stateless`, next to one replica reached directly.
#
# Everything listens on 127.0.0.1 (free ports) and is stopped by pid at the end. The replicas,
# nginx and the driver (charly-mcp/examples/lb_bench.rs) share this machine's cores: on a
# 2-core machine, 3 replicas cannot run 3 calls at once, so the balancer shows its own cost
# and how the replicas share the cores, not a 3x gain.
#
# Usage: scripts/bench-nginx.sh [--secs S] [--workers N] [--rounds N]   (BENCH_PROFILE=debug|release, default release)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
profile="${BENCH_PROFILE:-release}"
flag=(); [[ "$profile" == release ]] && flag=(--release)
cargo build "${flag[@]}" -p charly-cli >&2
cargo build "${flag[@]}" -p charly-mcp --example lb_bench >&2
target="${CARGO_TARGET_DIR:-$root/target}/$profile"
command -v nginx >/dev/null || { echo "bench-nginx: nginx is missing (scripts/runtimes.sh)" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
work="$(mktemp -d "${TMPDIR:-/tmp}/charly-bench-nginx.XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
wait_port() {
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "bench-nginx: nothing listens on 127.0.0.1:$1" >&2; exit 1
}

mkdir -p "$work/proj" "$work/nginx/logs" "$work/nginx/tmp" "$work/home"
conf="$(cat deploy/nginx/charly.conf.template)"
nginx_port="$(free_port)"
conf="${conf//@LISTEN@/127.0.0.1:$nginx_port}"
ports=()
for i in 0 1 2; do
  port="$(free_port)"
  ports+=("$port")
  HOME="$work/home" "$target/charly" -C "$work/proj" mcp serve --stateless --listen "127.0.0.1:$port" \
    2>"$work/replica-$i.log" &
  pids+=($!)
  conf="${conf//@REPLICA_$i@/127.0.0.1:$port}"
done
# No access log: one line per call would be the balancer's biggest cost here.
conf="${conf//access_log logs\/access.log charly;/access_log off;}"
printf '%s\n' "$conf" >"$work/nginx/charly.conf"
nginx -p "$work/nginx" -c "$work/nginx/charly.conf" -g 'daemon off;' 2>"$work/nginx.log" &
pids+=($!)
for port in "${ports[@]}" "$nginx_port"; do wait_port "$port"; done

echo "$(nproc) cores shared by 3 replicas, nginx (1 worker) and the driver; profile $profile"
echo "nginx -> 3 replicas: http://127.0.0.1:$nginx_port/mcp; one replica directly: http://127.0.0.1:${ports[0]}/mcp"
"$target/examples/lb_bench" --url "http://127.0.0.1:$nginx_port/mcp" --url "http://127.0.0.1:${ports[0]}/mcp" "$@"
