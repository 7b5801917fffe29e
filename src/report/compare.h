// report/compare.h — two runs task by task: wins and losses, and the paired difference of their
// pass rates with a 95% confidence interval.
//
// The tasks compared are those with a result (report/report.h: neither broken nor interrupted) in
// both runs, matched by task id; the others are listed as unpaired. Over the n paired tasks, with
// g = tasks only B passes ("gains") and l = tasks only A passes ("losses"), the difference of pass
// rates is d = (g − l) / n. Its interval is the normal (Wald) approximation for paired
// proportions, the one behind McNemar's test:
//     se = sqrt((g + l) − (g − l)² / n) / n,    95% CI = d ± 1.96 · se, clipped to [−1, 1].
// It is closed-form and deterministic (no resampling, no seed). It is too narrow when g + l is
// small, so McNemar's exact two-sided p-value (binomial, g of g + l at ½) is given beside it.
// Between two passing kernels, B is "faster" or "slower" when the speedups differ by more than
// kSameSpeedTolerance (relative); otherwise "same speed".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace nki_agent {

inline constexpr double kSameSpeedTolerance = 0.01;
inline constexpr double kNormalQuantile975 = 1.959963984540054;

enum class Verdict { kGain, kLoss, kFaster, kSlower, kSameSpeed, kBothFail, kUnpaired };

// "gain", "loss", "faster", "slower", "same_speed", "both_fail", "unpaired".
std::string_view verdict_name(Verdict v);

struct PairedTask {
  std::string task_id, task;
  const TaskView* a = nullptr;  // null: not in run A
  const TaskView* b = nullptr;
  Verdict verdict = Verdict::kUnpaired;
  double speed_ratio = 0;  // B's speedup ÷ A's when both passed with a speed; else 0
};

struct PairedInterval {
  int n = 0, gains = 0, losses = 0;
  double difference = 0, low = 0, high = 0;  // of pass rates, B − A
  double mcnemar_p = 1;
};

// The interval of the file comment from the counts.
PairedInterval paired_interval(int n, int gains, int losses);
// McNemar's exact two-sided p-value for `gains` against `losses` discordant pairs.
double mcnemar_exact_p(int gains, int losses);

struct RunComparison {
  std::string run_a, run_b;
  std::vector<PairedTask> tasks;   // every task of either run, by task id
  int a_passed = 0, b_passed = 0;  // among the paired tasks
  int faster = 0, slower = 0, same_speed = 0, both_fail = 0, unpaired = 0;
  double geomean_ratio = 0;  // geomean of B ÷ A speedups over the tasks both passed with a speed; 0: none
  PairedInterval pass_rate;

  int wins() const { return pass_rate.gains + faster; }
  int losses() const { return pass_rate.losses + slower; }
};

RunComparison compare_runs(const RunReport& a, const RunReport& b);

}  // namespace nki_agent
