#!/usr/bin/env bash
# ThreadSanitizer job: builds the thread tests (tests/threads: the process-wide budget, ThreadPool, one
# publisher queue with its thread (tests/publish/test_publisher.cpp), streams batched across threads
# (tests/stream/test_batch_group.cpp), one
# Factory shared by eight threads) in a separate build directory with -Db_sanitize=thread and
# runs them. Any data race, lock-order inversion or deadlock TSAN sees fails the job.
#
#   bash scripts/tsan.sh            # configure once, build two tests, run them
#   TSAN_BUILD_DIR=/tmp/t bash scripts/tsan.sh
#
# Kept small: no GStreamer, no CLI, only the thread test executables and what they link. The test
# models are taken from the main build (build/tests, exported by `scripts/build.sh`) when there,
# else this build exports its own. Runs per thread: WEAVE_THREAD_TEST_ITERS (default 2 here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${TSAN_BUILD_DIR:-build-tsan}
if [ ! -f "$dir/build.ninja" ]; then
  models=()
  if [ -f build/tests/squeezenet1_1.onnx ] && [ -f build/tests/lstm_lm.onnx ]; then
    models=(-Dmodels_dir="$root/build/tests")
  fi
  meson setup "$dir" -Db_sanitize=thread -Dgstreamer=disabled -Dtools=disabled "${models[@]}"
fi
ninja -C "$dir" -j"${TSAN_JOBS:-2}" tests/threads/test_thread_budget tests/threads/test_factory_threads \
  tests/threads/test_thread_pool tests/publish/test_publisher \
  tests/threads/test_workspace tests/stream/test_batch_group
export TSAN_OPTIONS="second_deadlock_stack=1 history_size=4 ${TSAN_OPTIONS:-}"
export WEAVE_THREAD_TEST_ITERS=${WEAVE_THREAD_TEST_ITERS:-2}
cmd=(meson test -C "$dir" --suite threads --no-rebuild --print-errorlogs --num-processes 1)
batch=(meson test -C "$dir" stream-batch-group --no-rebuild --print-errorlogs)
# TSAN's shadow memory layout needs ASLR off on kernels with more mmap randomness than it
# expects ("unexpected memory mapping"); setarch -R turns it off for the test processes.
if setarch "$(uname -m)" -R true 2>/dev/null; then
  setarch "$(uname -m)" -R "${cmd[@]}"
  setarch "$(uname -m)" -R "${batch[@]}"
else
  "${cmd[@]}"
  "${batch[@]}"
fi
