# Sourced by the conformance scripts: builds charly-mcp's `everything` example and serves it
# on a free loopback port until the sourcing script exits.
#
# serve_everything NAME OUT [PROFILE]
#   NAME     the script's name, for its messages
#   OUT      the results directory (made anew); the server's stderr goes to OUT/server.log
#   PROFILE  debug (default: the test profile's build, no second build in CI) or release
# Sets `port` and `server_pid`; the server is killed on EXIT. Exits 1 when the server ends
# before it listens.
serve_everything() {
  local name="$1" profile="${3:-debug}"
  out="$2"
  local target_dir="${CARGO_TARGET_DIR:-$root/target}"
  if [[ "$profile" == release ]]; then
    cargo build --release -p charly-mcp --example everything >&2
  else
    cargo build -p charly-mcp --example everything >&2
  fi
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  rm -rf "$out"
  mkdir -p "$out"
  "$target_dir/$profile/examples/everything" --listen "127.0.0.1:$port" 2>"$out/server.log" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "$name: the server exited early:" >&2
      cat "$out/server.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}
