#!/usr/bin/env bash
# Installs what is missing, builds, and runs nki-agent's main job on its defaults: the benchmark
# over NKIBench's `nkibench-150` (the paper's scored 150 tasks, 50 per level). With no model
# configured that is every task's baseline kernel through the
# verification pipeline (and how to point it at a model); set NKIA_MODEL (plus its endpoint, see
# README) to run the agent instead. The job ends by writing the HTML report of the run
# (nki-agent-runs/report.html, docs/report.md) and printing its path; it exits with the bench's
# status. Arguments are passed to nki-agent instead
# (e.g. scripts/main.sh solve --task L1_014 --model NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
if [ $# -gt 0 ]; then exec ./build/nki-agent "$@"; fi

out=nki-agent-runs
args=(bench --tasks tasks/nkibench --suite nkibench-150 --out "$out")
if [ -n "${NKIA_MODEL:-}" ]; then args+=(--model "$NKIA_MODEL"); fi
status=0
./build/nki-agent "${args[@]}" || status=$?
if [ -f "$out/bench.sqlite" ]; then
  ./build/nki-agent report "$out/bench.sqlite" -o "$out/report.html"
  echo "HTML report: $(realpath "$out/report.html")"
fi
exit "$status"
