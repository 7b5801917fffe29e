#!/usr/bin/env bash
# Installs what is missing, builds, and runs nki-agent's main job on its defaults.
# Arguments are passed to nki-agent instead (e.g. scripts/main.sh dtypes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
if [ $# -eq 0 ]; then set -- info; fi
exec ./build/nki-agent "$@"
