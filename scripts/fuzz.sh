#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ in the sanitizer build (build-asan/, configured by
# scripts/asan_setup.sh: clang-16, ASan + UBSan, -Dfuzzing=true; shared with scripts/asan.sh),
# makes the seed corpora from the test models, and runs each fuzzer for a while. Any crash,
# sanitizer report, leak, timeout or out-of-memory fails the run; the input that caused it is
# saved as build-asan/crashes/<target>-<kind>-<hash> (reproduce: build-asan/fuzz/<target> FILE).
#
#   bash scripts/fuzz.sh                         # every target, FUZZ_SECONDS each (default 60)
#   FUZZ_SECONDS=3600 bash scripts/fuzz.sh       # the long run (docs/reliability.md)
#   bash scripts/fuzz.sh fuzz_onnx fuzz_npy      # some targets only
#   FUZZ_RUNS=1000000 FUZZ_SECONDS=14400 bash scripts/fuzz.sh   # 10^6 executions each (long run)
#
# Environment: FUZZ_BUILD_DIR (default build-asan), FUZZ_SECONDS, FUZZ_RUNS (stop a target
# after this many executions, whichever of the two comes first; default: time only), FUZZ_JOBS
# (fuzzers run at once, default 1; CI uses 2), FUZZ_RSS_MB (per-process memory limit, default
# 2048), FUZZ_LOGS (logs directory, default $FUZZ_BUILD_DIR/logs), FUZZ_SEED (libFuzzer's random
# seed; default: a new one each run). CI fixes the seed so that its run is the same sequence of
# inputs as a local run with that seed (up to where the slower machine stops): exploring with new
# seeds is the long runs' job, and what they find is fixed and saved under tests/fuzz/ first.
# The corpus grown by each run is kept in $FUZZ_BUILD_DIR/corpus/<target> and reused next time.
# A summary table (executions, executions per second, corpus size, result) ends the output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${FUZZ_BUILD_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
rss=${FUZZ_RSS_MB:-2048}
runs=${FUZZ_RUNS:--1}
seed=${FUZZ_SEED:-0}
all=(fuzz_artifact fuzz_onnx fuzz_npy fuzz_caps fuzz_shape_text fuzz_codecs)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

bash scripts/asan_setup.sh "$dir"
ninja -C "$dir" -j"${FUZZ_BUILD_JOBS:-1}" fuzz/make_fuzz_seeds $(printf 'fuzz/%s ' "${targets[@]}")

# Seeds: generated every run (cheap), from the project's own scripts and test models.
seeds="$dir/seeds"
/usr/bin/python3 scripts/make_fuzz_seeds.py "$seeds"
ASAN_OPTIONS=detect_leaks=0 "$dir/fuzz/make_fuzz_seeds" "$seeds/onnx" "$seeds"
declare -A seed_dir=([fuzz_artifact]=artifact [fuzz_onnx]=onnx [fuzz_npy]=npy [fuzz_caps]=caps
  [fuzz_shape_text]=shape_text [fuzz_codecs]=codecs)
declare -A max_len=([fuzz_artifact]=65536 [fuzz_onnx]=65536 [fuzz_npy]=4096 [fuzz_caps]=1024
  [fuzz_shape_text]=256 [fuzz_codecs]=16384)

logs=${FUZZ_LOGS:-$dir/logs}
mkdir -p "$dir/crashes" "$logs"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/bin/llvm-symbolizer-16}
export UBSAN_OPTIONS="external_symbolizer_path=$ASAN_SYMBOLIZER_PATH:$UBSAN_OPTIONS"
run_one() {
  local t=$1
  mkdir -p "$dir/corpus/$t"
  # GStreamer's caps text parser leaks on some errors (scripts/lsan.supp): the slow unwinder
  # gives LeakSanitizer the whole stack that the suppression matches on; nested arrays recurse
  # deeper than ASan's default 30 recorded frames (the 10^6-run long run met 40 such leaks).
  local asan=$ASAN_OPTIONS
  [ "$t" != fuzz_caps ] || asan="fast_unwind_on_malloc=0:malloc_context_size=255:$asan"
  ASAN_OPTIONS=$asan "$dir/fuzz/$t" "$dir/corpus/$t" "$seeds/${seed_dir[$t]}" -max_total_time="$seconds" -runs="$runs" -seed="$seed" \
    -max_len="${max_len[$t]}" -rss_limit_mb="$rss" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/$t-" >"$logs/$t.log" 2>&1
}
# At most $jobs at once; the next target starts as soon as any one finishes.
running=0
status=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ $running -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done

printf '%-16s %12s %10s %8s  %s\n' target executions exec/s corpus result
for t in "${targets[@]}"; do
  log="$logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$dir/corpus/$t" -type f | wc -l)
  result=ok
  if grep -qE '^==[0-9]+==ERROR|runtime error:|fuzz invariant violated|ERROR: libFuzzer|SUMMARY: ' "$log"; then
    result="FAILED (see $log)"
    status=1
  fi
  printf '%-16s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$result"
done
if [ $status -ne 0 ]; then
  for t in "${targets[@]}"; do
    grep -B2 -A30 -E '^==[0-9]+==ERROR|runtime error:|fuzz invariant violated|ERROR: libFuzzer' \
      "$logs/$t.log" | head -60 || true
  done
  echo "fuzzing found problems; inputs are in $dir/crashes/"
fi
exit $status
