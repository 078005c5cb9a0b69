#!/usr/bin/env bash
# Deterministic fuzzing, as CI runs it: each libFuzzer target of fuzz/ first replays every
# regression input of tests/fuzz/<target>/ and the generated seeds, then runs a fixed number of
# executions from a fixed seed, in the sanitizer build (build-asan/, configured by
# scripts/asan_setup.sh: clang-16, ASan + UBSan, -Dfuzzing=true; shared with scripts/asan.sh).
# Any crash, sanitizer report, leak, timeout or out-of-memory fails the run; the input is saved
# as $FUZZ_BUILD_DIR/crashes/<target>-<kind>-<hash> (reproduce: build-asan/fuzz/<target> FILE).
#
# The same commit gives the same result on every machine: the number of executions, not a
# time, ends a run; each target starts from an empty work corpus (nothing carried over from an
# earlier run); the model code runs on one thread (WEAVE_NUM_THREADS=1), without address-space
# randomisation (setarch -R), and libFuzzer does not reload its corpus on a timer. The fast
# kernels run at one instruction set whatever the CPU offers (WEAVE_ISA=avx2, every machine CI
# uses has it): which kernel a node gets, and so which code the fuzzer sees, must not depend on
# the CPU (a CI machine's run of seed 1 once took another path than this machine's and found
# another input). A slower machine takes longer and finds the same inputs. The AVX-512 paths are
# fuzzed by scripts/fuzz_long.sh, which runs at the CPU's own level. Each target's line in the summary ends with a
# signature of its final corpus (the sorted hashes of its inputs): two runs of one commit print
# the same ones.
#
#   bash scripts/fuzz.sh                          # every target, its default number of runs, seed 1
#   FUZZ_RUNS_SCALE=10 bash scripts/fuzz.sh       # ten times as many executions each
#   FUZZ_SEED=7 bash scripts/fuzz.sh fuzz_onnx    # one target, another seed
#   FUZZ_RUNS=20000 bash scripts/fuzz.sh          # 20,000 executions each (a quick check)
#
# Open-ended fuzzing (a time budget, new seeds, a corpus kept between runs, several processes) is
# scripts/fuzz_long.sh's job, outside CI; what it finds goes into tests/fuzz/<target>/ first.
#
# Environment: FUZZ_BUILD_DIR (default build-asan), FUZZ_SEED (default 1), FUZZ_RUNS_SCALE
# (default 1), FUZZ_RUNS (executions of every target, instead of the table), FUZZ_ISA (the
# fast kernels' instruction set: avx2 (default), none or native), FUZZ_JOBS (targets run at once, default 1; CI uses 2), FUZZ_RSS_MB (per-process
# memory limit, default 2048), FUZZ_LOGS (default $FUZZ_BUILD_DIR/logs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${FUZZ_BUILD_DIR:-build-asan}
seed=${FUZZ_SEED:-1}
scale=${FUZZ_RUNS_SCALE:-1}
jobs=${FUZZ_JOBS:-1}
rss=${FUZZ_RSS_MB:-2048}
isa=${FUZZ_ISA:-avx2}
[ "$isa" != native ] || isa=""  # WEAVE_ISA empty: the CPU's own
all=(fuzz_artifact fuzz_onnx fuzz_npy fuzz_caps fuzz_shape_text fuzz_codecs)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
# Executions per target: under a minute to about 4.5 minutes (fuzz_onnx) each on the slowest
# 2-core CI machine seen, two targets at a time: about 6 minutes for the part
# (docs/reliability.md, CI). FUZZ_RUNS_SCALE=2 doubles them.
declare -A runs=([fuzz_artifact]=400000 [fuzz_onnx]=150000 [fuzz_npy]=4000000 [fuzz_caps]=40000
  [fuzz_shape_text]=1000000 [fuzz_codecs]=75000)

source scripts/fuzz_common.sh
fuzz_prepare "$dir" "${targets[@]}"

run_one() {
  local t=$1 work="$dir/fuzz-run/$t"
  rm -rf "$work"
  mkdir -p "$work"
  # Replayed first: the regression inputs and the seeds (libFuzzer writes new inputs into the
  # first directory only, the work corpus).
  local inputs=("$seeds/${seed_dir[$t]}")
  [ ! -d "tests/fuzz/${seed_dir[$t]}" ] || inputs+=("tests/fuzz/${seed_dir[$t]}")
  WEAVE_NUM_THREADS=1 WEAVE_ISA="$isa" ASAN_OPTIONS="$(fuzz_asan_options "$t")" setarch -R \
    "$dir/fuzz/$t" "$work" "${inputs[@]}" -runs="${FUZZ_RUNS:-$((runs[$t] * scale))}" -seed="$seed" -reload=0 -purge_allocator_interval=-1 \
    -max_len="${max_len[$t]}" -rss_limit_mb="$rss" -timeout=60 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/$t-" >"$logs/$t.log" 2>&1
}
fuzz_run_all "${targets[@]}"
