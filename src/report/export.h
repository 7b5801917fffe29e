// report/export.h — a benchmark run's results in the formats other tools read.
//
//   csv                   the per-task table: one row per task of the run, every stored figure
//                         (the kernel's source stays in the database);
//   kernelbench           KernelBench's eval-results JSON: {"<task id>": [{sample_id, compiled,
//                         correctness, metadata, runtime, runtime_stats}]}, runtimes in ms of
//                         simulated time (-1 when the kernel was not timed), as KernelBench's
//                         scripts/benchmark_eval_analysis.py reads them;
//   kernelbench-baseline  KernelBench's baseline-timing JSON: {"level1": {"<task>.py": {mean, std,
//                         min, max, num_trials, hardware, device}}} of each task's eager baseline.
//   pass-at-k             CSV group,k,tasks,pass_at_k: pass@k for k = 1 .. K of a `bench --samples K`
//                         run, all tasks then each level (report/pass_at_k.h).
// Under --samples every episode is a CSV row (columns sample, seed) and a KernelBench sample
// (sample_id = the sample).
// Speedups in the KernelBench files divide the baseline's simulated time by the kernel's, so
// KernelBench's fast_p over them gives nki-agent's own.
#pragma once

#include <string>
#include <vector>

#include "agent/store.h"
#include "core/diagnostic.h"

namespace nki_agent {

enum class ExportFormat { kCsv, kKernelBench, kKernelBenchBaseline, kPassAtK };

// Code nkia_bad_argument for another name.
Result<ExportFormat> export_format_from_name(const std::string& name);

std::string export_csv(const std::vector<TaskRow>& rows);
std::string export_kernelbench(const std::vector<TaskRow>& rows);
std::string export_kernelbench_baseline(const std::vector<TaskRow>& rows);
std::string export_pass_at_k(const std::vector<TaskRow>& rows);

// The rows of `run_id` in `db_path` (empty run id: the most recent run) in `format`. Codes:
// nkia_store_io, nkia_bad_argument (no such run, no run at all).
Result<std::string> export_run(const std::string& db_path, const std::string& run_id, ExportFormat format);

}  // namespace nki_agent
