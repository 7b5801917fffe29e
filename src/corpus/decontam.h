// corpus/decontam.h — decontamination against NKIBench (all three levels) and the vocabulary
// check, by src/tasks/py/corpus_similarity.py (an AST reading of task.py, run as a trusted helper).
//
// NKIBench op graphs come from a conservative parse of each task's task.py (not from its toml):
// the same reading is applied to the corpus candidates, so the two sides are compared in one
// language. A candidate is contaminated when its op graph equals an NKIBench task's, or when its
// op-token similarity to the nearest NKIBench task reaches the threshold.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent::corpus {

struct ReferenceSource {
  std::string id;  // L2_019
  std::string task_py;
};

// Every task.py under root/level1, level2 and level3. Codes: nkia_task_not_found (no such
// folders), those of find_task_dirs.
Result<std::vector<ReferenceSource>> load_nkibench_sources(const std::string& root);

struct CandidateSource {
  std::string id;
  std::string task_py;
};

struct Similarity {
  std::string op_graph;  // the parse's reading; empty when not parsed
  bool parsed = false;
  std::vector<std::string> unknown_calls;  // calls outside the vocabulary's templates
  std::string nearest;                     // the nearest NKIBench task
  double score = 0;                        // its similarity, 0..1
  std::string graph_match;                 // an NKIBench task with the same op graph; empty: none
};

struct SimilarityRun {
  std::vector<Similarity> candidates;  // in order
  int references_parsed = 0, references = 0;
};

// Codes: those of the helper's run (nkia_helper_*).
Result<SimilarityRun> compare_to_nkibench(const std::vector<CandidateSource>& candidates,
                                          const std::vector<ReferenceSource>& references, const std::string& python);

}  // namespace nki_agent::corpus
