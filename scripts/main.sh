#!/usr/bin/env bash
# Installs what is missing, builds, and runs nki-agent's main job on its defaults: the benchmark
# over NKIBench's `nkibench-150` (the paper's scored 150 tasks, 50 per level). With no model
# configured that is every task's baseline kernel through the
# verification pipeline (and how to point it at a model); set NKIA_MODEL (plus its endpoint, see
# README) to run the agent instead. Arguments are passed to nki-agent instead
# (e.g. scripts/main.sh solve --task L1_014 --model NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
if [ $# -eq 0 ]; then
  set -- bench --tasks tasks/nkibench --suite nkibench-150
  if [ -n "${NKIA_MODEL:-}" ]; then set -- "$@" --model "$NKIA_MODEL"; fi
fi
exec ./build/nki-agent "$@"
