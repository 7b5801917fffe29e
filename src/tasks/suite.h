// tasks/suite.h — named task lists: the published subsets of NKIBench (the paper's scored 150, the
// inferred 60-task SFT subset) and the levels, runnable by name (`bench --suite`, `tasks list
// --suite`).
//
// A suite is `<tasks root>/suites/<name>.toml`:
//   name = "nkibench-150"
//   description = "..."                 # one line: where the list comes from
//   inferred = false                    # true: the list is a reading of the source, not published
//   levels = [1, 2]                     # every task of these levels under the root, and/or
//   tasks = ["L1_014", "L2_001", ...]   # these task ids, in this order
// A suite that names a task the root does not hold is an error naming it: a benchmark run on a
// silently shorter list would be reported as the suite.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct Suite {
  std::string name, description;
  std::string path;  // the .toml it came from
  bool inferred = false;
  std::vector<int> levels;
  std::vector<std::string> tasks;
};

// The names of the suites under `root`/suites, sorted; empty when there is no such folder.
std::vector<std::string> suite_names(const std::string& root);
// Codes: nkia_suite_not_found (the message lists the suites there), nkia_suite_invalid (names the
// field), nkia_task_toml_syntax.
Result<Suite> load_suite(const std::string& root, const std::string& name);
// The suite's task folders under `root`: the listed ids in order, then the tasks of its levels
// (sorted, each once). Codes: nkia_suite_missing_task (names every missing id), those of
// find_task_dirs.
Result<std::vector<std::string>> suite_task_dirs(const Suite& suite, const std::string& root);

}  // namespace nki_agent
