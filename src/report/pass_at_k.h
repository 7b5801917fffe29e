// report/pass_at_k.h — pass@k over a run's samples (`bench --samples K`).
//
// For a task with n episodes that have a result, c of them passing, the unbiased estimator of the
// chance that at least one of k episodes drawn without replacement passes is
//   pass@k = 1 − C(n−c, k) / C(n, k)            (Chen et al., 2021, "Evaluating Large Language
//                                                 Models Trained on Code", §2.1)
// computed as the product 1 − Π_{i=n−c+1..n} (1 − k/i), which never forms a binomial coefficient
// (no overflow, no cancellation); it is 1 when n − c < k. A group's pass@k is the mean over its
// tasks with at least k episodes with a result (a task with fewer is left out of that k's mean);
// interrupted and broken episodes are not results and are not counted in n.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/store.h"

namespace nki_agent {

// 1 − C(n−c, k)/C(n, k); 0 when k > n or k < 1 (undefined: no k of n to draw).
double pass_at_k(int n, int c, int k);

struct PassAtK {
  std::string group;  // "all", "L1", ...
  int k = 0;
  int tasks = 0;     // tasks with at least k results
  double value = 0;  // mean pass@k over them
};

// Episodes and passes per task of the rows (a result only: not interrupted, not broken).
struct TaskSamples {
  int level = 0;
  int n = 0, c = 0;
};
std::map<std::string, TaskSamples> samples_by_task(const std::vector<TaskRow>& rows);

// The largest number of samples of any task in the rows (1 for a run without --samples).
int max_samples(const std::vector<TaskRow>& rows);

// pass@k for k = 1 .. K (K: max_samples of the rows), for all tasks and per level: "all" first,
// then "L<level>" by level, each group's k ascending.
std::vector<PassAtK> pass_at_k_table(const std::vector<TaskRow>& rows);

}  // namespace nki_agent
