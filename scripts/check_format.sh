#!/usr/bin/env bash
# Checks that every C++ source of the repository is formatted with the root .clang-format
# (clang-format --dry-run --Werror); prints the files that are not and how to fix them.
#   bash scripts/check_format.sh            # exits 1 when a file needs formatting
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find core caps gst-plugin tools tests bench fuzz pipelines docs \
  \( -name '*.cpp' -o -name '*.h' \) -not -path '*/build*' | sort)
# clang-format exits non-zero on the first badly formatted file: the list is what counts.
bad=$({ clang-format --dry-run --Werror "${files[@]}" 2>&1 || true; } |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ -n "$bad" ]; then
  echo "not formatted with .clang-format (fix: clang-format -i FILE):"
  echo "$bad"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
