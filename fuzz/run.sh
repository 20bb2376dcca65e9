#!/bin/bash
# Runs the given fuzz targets (default: all five) one after another, SECONDS each (default
# 600), on one core at nice 10, from the instrumented build of `cargo fuzz build` (see
# README.md). Appends start/end lines with corpus sizes to logs/summary.txt; libFuzzer's own
# output, with its final stats, goes to logs/<target>.log.
set -u
cd "$(dirname "$0")"
SECONDS_EACH=${SECONDS_EACH:-600}
BIN=../target/x86_64-unknown-linux-gnu/release
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(argv sse plan keypath jsonrpc)
mkdir -p logs
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  dict=()
  [ -f "$t.dict" ] && dict=("-dict=$t.dict")
  echo "$(date -u +%T) start $t corpus=$(ls "corpus/$t" | wc -l)" >> logs/summary.txt
  nice -n 10 "$BIN/$t" "corpus/$t" "seeds/$t" "${dict[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$t/" > "logs/$t.log" 2>&1
  rc=$?
  echo "$(date -u +%T) end $t rc=$rc corpus=$(ls "corpus/$t" | wc -l) artifacts=$(ls "artifacts/$t" | wc -l)" >> logs/summary.txt
done
