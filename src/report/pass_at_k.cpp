// report/pass_at_k.cpp — the unbiased pass@k estimator and its table.
#include "report/pass_at_k.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "agent/loop.h"

namespace nki_agent {

double pass_at_k(int n, int c, int k) {
  if (k < 1 || k > n) return 0;
  c = std::clamp(c, 0, n);
  if (n - c < k) return 1;
  double none = 1;  // C(n−c, k)/C(n, k) = Π_{i=n−c+1..n} (1 − k/i)
  for (int i = n - c + 1; i <= n; ++i) none *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none;
}

std::map<std::string, TaskSamples> samples_by_task(const std::vector<TaskRow>& rows) {
  std::map<std::string, TaskSamples> out;
  for (const auto& r : rows) {
    if (r.status == kStatusInterrupted || r.status == "error") continue;  // not results
    auto& t = out[r.task_id];
    t.level = r.level;
    ++t.n;
    if (r.passed) ++t.c;
  }
  return out;
}

int max_samples(const std::vector<TaskRow>& rows) {
  int k = 1;
  for (const auto& r : rows) k = std::max(k, r.sample + 1);
  return k;
}

std::vector<PassAtK> pass_at_k_table(const std::vector<TaskRow>& rows) {
  const auto tasks = samples_by_task(rows);
  const int kmax = max_samples(rows);
  std::set<int> levels;
  for (const auto& [id, t] : tasks) levels.insert(t.level);
  std::vector<PassAtK> out;
  auto group = [&](const std::string& name, bool all, int level) {
    for (int k = 1; k <= kmax; ++k) {
      PassAtK p;
      p.group = name;
      p.k = k;
      double sum = 0;
      for (const auto& [id, t] : tasks) {
        if ((!all && t.level != level) || t.n < k) continue;
        ++p.tasks;
        sum += pass_at_k(t.n, t.c, k);
      }
      p.value = p.tasks > 0 ? sum / p.tasks : 0;
      out.push_back(p);
    }
  };
  group("all", true, 0);
  for (int level : levels) group(fmt::format("L{}", level), false, level);
  return out;
}

}  // namespace nki_agent
