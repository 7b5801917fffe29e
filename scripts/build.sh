#!/usr/bin/env bash
# Configures and builds nki-agent into a build folder.
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
# BUILD_DIR defaults to build/. Warnings are errors when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
werror=OFF
if [ "${CI:-}" = "true" ]; then werror=ON; fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} -DNKIA_WERROR=$werror "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
