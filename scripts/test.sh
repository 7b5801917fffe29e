#!/usr/bin/env bash
# Installs what is missing, checks the C++ formatting (scripts/check-format.sh: it fails fast,
# before any build, listing the files), builds, and runs the default test suite (everything but
# the tests labelled "slow"), then the unit tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer.
#   scripts/test.sh            the full default run (what CI runs)
#   scripts/test.sh --fast     skip the sanitizer pass
#   scripts/test.sh --slow     also run the tests labelled "slow"
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
label_args=(-LE slow)
for a in "$@"; do
  case "$a" in
    --fast) fast=1 ;;
    --slow) label_args=() ;;
    *) echo "usage: scripts/test.sh [--fast] [--slow]" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh
bash scripts/check-format.sh
jobs=$(nproc)

if [ $fast -eq 0 ]; then
  echo "== sanitizer build (ASan + UBSan) =="
  BUILD_TYPE=Debug bash scripts/build.sh build-asan -DNKIA_SANITIZE=ON -DNKIA_BUILD_BENCH=OFF
  # Leak checking stays on; OpenBLAS's thread pool is not torn down at exit, so it is suppressed.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OPENBLAS_NUM_THREADS=1 \
    ctest --test-dir build-asan -L unit -LE slow -j "$jobs" --output-on-failure
fi

echo "== release build =="
bash scripts/build.sh build
ctest --test-dir build "${label_args[@]}" -j "$jobs" --output-on-failure
