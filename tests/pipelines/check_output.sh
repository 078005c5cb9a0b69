#!/usr/bin/env bash
# check_output.sh PATTERN SCRIPT [ARGS...]: runs a pipelines/ script, shows its output, and fails
# unless it exits 0 and prints a line matching the extended regex PATTERN. Exit 77 (a missing
# model) is passed on, which meson test reports as skipped.
set -uo pipefail
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
[ $status -eq 0 ] || exit $status
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "FAIL: no line matches /$pattern/" >&2
  exit 1
fi
