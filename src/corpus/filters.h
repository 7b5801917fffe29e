// corpus/filters.h — the execution filters of generated tasks (src/tasks/py/corpus_filter.py run
// as a trusted helper: tasks/subprocess.h's rlimits, deadline and clean one-thread environment).
//
// Each batch runs twice, in two processes; a task whose output hashes differ fails
// `deterministic`. The other checks (runs, finite, not_constant, sensitive, magnitude, runtime,
// memory) are the helper's, described there. The bands: one forward within runtime_band_s on one
// thread, inputs + weights + outputs within memory_band_mib.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent::corpus {

struct FilterTask {
  std::string id;
  std::string task_py;
  double atol = 1e-4;
  std::map<int, int64_t> int_high;  // integer inputs (by position): ids lie in [0, high)
};

struct FilterOptions {
  std::string python;  // empty: tasks/helpers.h's choice
  int jobs = 1;        // batches run at once (each in two processes)
  uint64_t seed = 0;
  double runtime_band_s = 2.0;
  int64_t memory_band_mib = 256;
  int batch = 64;  // tasks per helper process
};

// The names of the checks, in the order they run.
const std::vector<std::string>& filter_check_names();

struct FilterVerdict {
  bool passed = false;
  std::string failed;     // the first failing check; empty when passed
  nlohmann::json checks;  // name -> "pass" | reason | "skipped"
};

struct FilterRun {
  std::vector<FilterVerdict> verdicts;  // one per task, in order
  int64_t peak_rss_mib = 0;             // the largest helper process's
};

// Codes: nkia_helper_spawn, nkia_helper_timeout, nkia_helper_output_limit, nkia_helper_died (the
// helper exited non-zero or answered something else than its JSON).
Result<FilterRun> run_filters(const std::vector<FilterTask>& tasks, const FilterOptions& options);

}  // namespace nki_agent::corpus
