#!/usr/bin/env bash
# Open-ended fuzzing, outside CI: each libFuzzer target of fuzz/ runs for a time budget (or a
# number of executions) from a new seed each run, in several processes, growing a corpus kept
# in $FUZZ_BUILD_DIR/corpus/<target> from one run to the next. What it finds is saved as
# $FUZZ_BUILD_DIR/crashes/<target>-<kind>-<hash>; each finding is fixed and its input moved
# into tests/fuzz/<target>/, where the deterministic run (scripts/fuzz.sh, CI) and the
# fuzz-replay tests of `meson test` replay it from then on (docs/reliability.md).
#
#   bash scripts/fuzz_long.sh                                 # every target, one hour each
#   FUZZ_SECONDS=600 FUZZ_WORKERS=2 bash scripts/fuzz_long.sh fuzz_onnx
#   FUZZ_RUNS=10000000 FUZZ_SECONDS=0 bash scripts/fuzz_long.sh fuzz_onnx   # 10^7 executions
#
# Environment: FUZZ_BUILD_DIR (default build-asan), FUZZ_SECONDS (per target, default 3600;
# 0: no limit), FUZZ_RUNS (executions per target, all workers together; default: no limit),
# FUZZ_WORKERS (processes per target, default 1), FUZZ_SEED (default: new each run),
# FUZZ_JOBS (targets at once, default 1), FUZZ_RSS_MB (default 2048), FUZZ_LOGS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${FUZZ_BUILD_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-3600}
total_runs=${FUZZ_RUNS:--1}
workers=${FUZZ_WORKERS:-1}
rss=${FUZZ_RSS_MB:-2048}
all=(fuzz_artifact fuzz_onnx fuzz_npy fuzz_caps fuzz_shape_text fuzz_codecs)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

source scripts/fuzz_common.sh
fuzz_prepare "$dir" "${targets[@]}"

for t in "${targets[@]}"; do corpus_of[$t]="$dir/corpus/$t"; done

run_one() {
  local t=$1 w pids=() status=0
  mkdir -p "$dir/corpus/$t"
  rm -f "$logs/$t".*.log  # an earlier run's workers
  local inputs=("$seeds/${seed_dir[$t]}")
  [ ! -d "tests/fuzz/${seed_dir[$t]}" ] || inputs+=("tests/fuzz/${seed_dir[$t]}")
  local runs=$total_runs
  [ "$runs" -lt 0 ] || runs=$(((runs + workers - 1) / workers))
  for ((w = 0; w < workers; w++)); do
    local seed=${FUZZ_SEED:-0}
    [ "$seed" = 0 ] || seed=$((seed + w))
    ASAN_OPTIONS="$(fuzz_asan_options "$t")" "$dir/fuzz/$t" "$dir/corpus/$t" "${inputs[@]}" \
      -max_total_time="$seconds" -runs="$runs" -seed="$seed" -max_len="${max_len[$t]}" \
      -rss_limit_mb="$rss" -timeout=60 -print_final_stats=1 -artifact_prefix="$dir/crashes/$t-" \
      >"$logs/$t.$w.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  # One log per target for the summary: the workers' logs one after another, and the
  # executions of all of them.
  cat "$logs/$t".*.log >"$logs/$t.log"
  local sum=0 n
  for n in $(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t".*.log); do sum=$((sum + n)); done
  echo "stat::number_of_executed_units: $sum" >>"$logs/$t.log"
  return $status
}
fuzz_run_all "${targets[@]}"
