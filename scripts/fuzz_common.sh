# Shared by scripts/fuzz.sh (deterministic, CI) and scripts/fuzz_long.sh (open-ended): building
# the targets, the seeds, the sanitizer settings, running targets side by side and the summary.
# Sourced with the working directory at the repository root and $root set.

declare -A seed_dir=([fuzz_artifact]=artifact [fuzz_onnx]=onnx [fuzz_npy]=npy [fuzz_caps]=caps
  [fuzz_shape_text]=shape_text [fuzz_codecs]=codecs)
# Where a target's corpus is when it is not the deterministic run's work directory (fuzz_long.sh).
declare -A corpus_of=()
declare -A max_len=([fuzz_artifact]=65536 [fuzz_onnx]=65536 [fuzz_npy]=4096 [fuzz_caps]=1024
  [fuzz_shape_text]=256 [fuzz_codecs]=16384)

# Configures and builds the sanitizer build's targets and writes the seeds (cheap, every run):
# sets $seeds and $logs.
fuzz_prepare() {
  local dir=$1
  shift
  bash scripts/asan_setup.sh "$dir"
  ninja -C "$dir" -j"${FUZZ_BUILD_JOBS:-1}" fuzz/make_fuzz_seeds $(printf 'fuzz/%s ' "$@")
  seeds="$dir/seeds"
  /usr/bin/python3 scripts/make_fuzz_seeds.py "$seeds"
  ASAN_OPTIONS=detect_leaks=0 "$dir/fuzz/make_fuzz_seeds" "$seeds/onnx" "$seeds"
  logs=${FUZZ_LOGS:-$dir/logs}
  mkdir -p "$dir/crashes" "$logs"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/bin/llvm-symbolizer-16}
  export UBSAN_OPTIONS="external_symbolizer_path=$ASAN_SYMBOLIZER_PATH:$UBSAN_OPTIONS"
}

# ASAN_OPTIONS for target $1. GStreamer's caps text parser leaks on some errors
# (scripts/lsan.supp): the slow unwinder gives LeakSanitizer the whole stack that the
# suppression matches on; nested arrays recurse deeper than ASan's default 30 recorded frames.
fuzz_asan_options() {
  local o="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
  [ "$1" != fuzz_caps ] || o="fast_unwind_on_malloc=0:malloc_context_size=255:$o"
  echo "$o"
}

# Runs run_one (defined by the caller) for each target, $FUZZ_JOBS at once, then prints one
# line per target (executions, rate, corpus size and signature, result) and the findings.
fuzz_run_all() {
  local jobs=${FUZZ_JOBS:-1} running=0 status=0 t
  for t in "$@"; do
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
  printf '%-16s %12s %8s %8s %14s  %s\n' target executions exec/s corpus signature result
  for t in "$@"; do
    local log="$logs/$t.log" corpus=${corpus_of[$t]:-$dir/fuzz-run/$t}
    local execs rate size sig result=ok
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    size=$(find "$corpus" -type f | wc -l)
    sig=$(find "$corpus" -type f -printf '%f\n' | sort | sha256sum | cut -c1-12)
    if grep -qE '^==[0-9]+==ERROR|runtime error:|fuzz invariant violated|ERROR: libFuzzer|SUMMARY: ' "$log"; then
      result="FAILED (see $log)"
      status=1
    fi
    printf '%-16s %12s %8s %8s %14s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$size" "$sig" "$result"
  done
  if [ $status -ne 0 ]; then
    for t in "$@"; do
      grep -B2 -A30 -E '^==[0-9]+==ERROR|runtime error:|fuzz invariant violated|ERROR: libFuzzer' \
        "$logs/$t.log" | head -60 || true
    done
    echo "fuzzing found problems; inputs are in $dir/crashes/ (move each into tests/fuzz/<target>/ with its fix)"
  fi
  return $status
}
