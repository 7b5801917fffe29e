// report/compare.cpp — the paired comparison of two runs.
#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

namespace nki_agent {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kGain: return "gain";
    case Verdict::kLoss: return "loss";
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kSameSpeed: return "same_speed";
    case Verdict::kBothFail: return "both_fail";
    case Verdict::kUnpaired: return "unpaired";
  }
  return "unpaired";
}

double mcnemar_exact_p(int gains, int losses) {
  const int m = gains + losses;
  if (m == 0) return 1;
  const int k = std::min(gains, losses);
  // 2 · P[X ≤ k], X ~ Binomial(m, ½), in logs so that large m does not overflow.
  double tail = 0;
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(m + 1.0) - std::lgamma(i + 1.0) - std::lgamma(m - i + 1.0) - m * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

PairedInterval paired_interval(int n, int gains, int losses) {
  PairedInterval p;
  p.n = n;
  p.gains = gains;
  p.losses = losses;
  p.mcnemar_p = mcnemar_exact_p(gains, losses);
  if (n <= 0) return p;
  const double g = gains, l = losses, nn = n;
  p.difference = (g - l) / nn;
  const double var = std::max(0.0, (g + l) - (g - l) * (g - l) / nn);
  const double se = std::sqrt(var) / nn;
  p.low = std::max(-1.0, p.difference - kNormalQuantile975 * se);
  p.high = std::min(1.0, p.difference + kNormalQuantile975 * se);
  return p;
}

RunComparison compare_runs(const RunReport& a, const RunReport& b) {
  RunComparison c;
  c.run_a = a.run.run_id;
  c.run_b = b.run.run_id;
  // Paired by (task, sample): under bench --samples each episode of B meets A's of the same index.
  std::map<std::pair<std::string, int>, PairedTask> by_id;
  auto name = [](const TaskRow& r) {
    return r.sample > 0 ? r.task_id + " (sample " + std::to_string(r.sample) + ")" : r.task_id;
  };
  for (const auto& t : a.tasks) {
    auto& p = by_id[{t.row.task_id, t.row.sample}];
    p.task_id = name(t.row);
    p.task = t.row.task;
    p.a = &t;
  }
  for (const auto& t : b.tasks) {
    auto& p = by_id[{t.row.task_id, t.row.sample}];
    p.task_id = name(t.row);
    if (p.task.empty()) p.task = t.row.task;
    p.b = &t;
  }
  int n = 0, gains = 0, losses = 0, ratios = 0;
  double log_ratio = 0;
  for (auto& [id, p] : by_id) {
    if (!p.a || !p.b || !is_result(p.a->outcome) || !is_result(p.b->outcome)) {
      p.verdict = Verdict::kUnpaired;
      ++c.unpaired;
      c.tasks.push_back(p);
      continue;
    }
    ++n;
    const bool pa = p.a->outcome == Outcome::kPassed, pb = p.b->outcome == Outcome::kPassed;
    if (pa) ++c.a_passed;
    if (pb) ++c.b_passed;
    if (pb && !pa) {
      p.verdict = Verdict::kGain;
      ++gains;
    } else if (pa && !pb) {
      p.verdict = Verdict::kLoss;
      ++losses;
    } else if (!pa) {
      p.verdict = Verdict::kBothFail;
      ++c.both_fail;
    } else {
      const double sa = p.a->row.speedup, sb = p.b->row.speedup;
      if (sa > 0 && sb > 0) {
        p.speed_ratio = sb / sa;
        log_ratio += std::log(p.speed_ratio);
        ++ratios;
      }
      if (sa > 0 && sb > 0 && p.speed_ratio > 1 + kSameSpeedTolerance) {
        p.verdict = Verdict::kFaster;
        ++c.faster;
      } else if (sa > 0 && sb > 0 && p.speed_ratio < 1 / (1 + kSameSpeedTolerance)) {
        p.verdict = Verdict::kSlower;
        ++c.slower;
      } else {
        p.verdict = Verdict::kSameSpeed;
        ++c.same_speed;
      }
    }
    c.tasks.push_back(p);
  }
  c.pass_rate = paired_interval(n, gains, losses);
  if (ratios > 0) c.geomean_ratio = std::exp(log_ratio / ratios);
  return c;
}

}  // namespace nki_agent
