// corpus/corpus.h — `nki-agent corpus generate`: draw candidates, drop duplicates, drop what is
// too close to NKIBench, run the execution filters, and write the kept tasks (each a task folder
// of tasks/FORMAT.md) with their provenance (corpus.jsonl) and the funnel (corpus_summary.json).
//
// Output layout:
//   DIR/level{1,2,3}/C{L}_{NNNNN}_{name}/{task.py, task.toml, baseline.py}
//   DIR/lib/                    a copy of <nkibench>/lib (its .py files), so baselines import
//                               nkibench_ops as NKIBench's do (tasks/baseline.h finds the nearest
//                               lib/ above a level folder) and the folder can move to another machine
//   DIR/corpus.jsonl            one line per kept task, in task order
//   DIR/rejected.jsonl          one line per candidate dropped, with the stage and the reason
//   DIR/corpus_summary.json     options, bands, threshold, the funnel
// The kept tasks are the first `count` candidates (by draw index) that pass every stage, so the
// same seed and generator version give the same bytes whatever --jobs is.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostic.h"
#include "corpus/filters.h"
#include "corpus/graph.h"

namespace nki_agent::corpus {

struct CorpusOptions {
  int64_t count = 100;
  uint64_t seed = 0;
  std::string out;
  int jobs = 1;
  std::string nkibench;                // NKIBench's root (level1..3 and lib/); empty: tasks/nkibench
  bool baseline_only = false;          // only ops with a lib kernel
  bool filters = true;                 // run the execution filters
  bool force = false;                  // replace an existing corpus in `out`
  double similarity_threshold = 0.85;  // a candidate at least this close to an NKIBench task is dropped
  double validation_fraction = 0.05;
  FilterOptions filter;
  // Candidates planted before the drawn ones (tests): graphs that go through the same stages as
  // drawn candidates (their draw index is -1, -2, ...).
  std::vector<TaskGraph> planted;
};

struct CorpusResult {
  nlohmann::json summary;  // what corpus_summary.json holds
  int64_t kept = 0;
  std::vector<nlohmann::json> planted_rejected;  // the rejected.jsonl lines of planted candidates
};

// Codes: nkia_bad_argument (count, out), nkia_unwritable, nkia_task_not_found (no readable
// <nkibench>/lib), those of the helpers and of load_nkibench_sources.
Result<CorpusResult> generate_corpus(const CorpusOptions& options);

}  // namespace nki_agent::corpus
