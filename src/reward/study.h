// reward/study.h — `nki-agent reward-study`: every preset scored over a labelled catalogue of
// kernels, to show on kernels rather than in prose what each reward pays for.
//
// The catalogue is built from the repository's own kernels, each labelled by what it is:
//   baseline       the test tasks' baseline kernels (correct, the speed bar itself);
//   correct_slow   tests/tasks/slow/: correct kernels slower than the baseline;
//   correct_fast   tests/tasks/fused/: correct fused Level-2 kernels faster than the eager baseline;
//   compile_error  each baseline with one call misspelt (nl.load -> nl.lod, nl.store -> nl.stor):
//                  kernels that do not build;
//   hack:<check>   tests/tasks/hacks/: the adversarial suite, grouped by the check that rejects it.
// A kernel's task is its `# task:` header (test kernels) or the folder it belongs to (baselines).
// True quality, for the rank correlation: 0 for compile errors and hacks, 1 + speedup for a correct
// kernel (a hack is worth nothing whatever a reward pays it).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "reward/score.h"

namespace nki_agent {

struct StudyEntry {
  std::string family;
  std::string task_id;
  std::string kernel;  // the file (or "<file> with nl.load misspelt")
  std::string source;
};

// The catalogue of `source_dir` (the repository root). Code: nkia_bad_argument when its test
// kernels are not there.
Result<std::vector<StudyEntry>> study_catalogue(const std::string& source_dir);

struct StudyRow {
  StudyEntry entry;
  RewardResult result;
  double quality = 0;
};

struct StudyResult {
  std::vector<StudyRow> rows;
  std::vector<std::string> families;                          // in catalogue order
  std::vector<std::string> presets;                           // in table order
  std::map<std::string, std::map<std::string, double>> mean;  // family -> preset -> mean score
  std::map<std::string, int> count;                           // family -> kernels
  std::map<std::string, double> spearman;                     // preset -> rank correlation with quality
  std::vector<std::string> unexpected;                        // catalogue kernels whose verdict contradicts their label
  double seconds = 0;

  nlohmann::json to_json() const;
  std::string markdown() const;  // the table docs/rl.md shows
};

// Scores every entry (seeds per shape set: `seeds`, 0 for the tasks' own).
StudyResult run_reward_study(RewardScorer& scorer, const std::vector<StudyEntry>& catalogue, int seeds,
                             const std::function<void(const std::string&)>& progress = {});

// Spearman's rank correlation (average ranks for ties); 0 when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace nki_agent
