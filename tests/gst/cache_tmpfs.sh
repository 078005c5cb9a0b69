#!/bin/sh
# Runs the cache-directory tests of test_gst_core_helpers on real small file systems: a tmpfs
# filled to the last byte (writes fail with ENOSPC) and a read-only one (EROFS). Mounting needs
# a user and mount namespace (unshare -rm, no root needed); where the system does not allow one
# (some containers) the test is skipped (exit 77).
#   cache_tmpfs.sh <test_gst_core_helpers>
set -eu
bin=$1
if ! unshare -rm true 2>/dev/null; then
  echo "no user+mount namespaces here (unshare -rm): skipped"
  exit 77
fi
exec unshare -rm sh -eu -c '
  base=$(mktemp -d)
  mkdir "$base/full" "$base/ro"
  mount -t tmpfs -o size=64k tmpfs "$base/full"
  # Fill it: dd stops at ENOSPC.
  dd if=/dev/zero of="$base/full/filler" bs=4k 2>/dev/null || true
  mount -t tmpfs -o size=64k,ro tmpfs "$base/ro"
  WEAVE_TMPFS_FULL="$base/full" WEAVE_TMPFS_RO="$base/ro" "$1" --run_test="cache_dir_full_tmpfs,cache_dir_read_only_tmpfs" --log_level=test_suite
' sh "$bin"
