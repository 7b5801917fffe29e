// reward/presets.cpp — the preset table. Sources of each shape: docs/rl.md "Presets".
#include "reward/presets.h"

#include <algorithm>
#include <cmath>

namespace nki_agent {

namespace {

double speed(const RewardComponents& c) {
  return c.speedup.value_or(0.0);
}

// CUDA-Agent's milestone test b(t, t0) = 1[(t0 - t) / t0 > 5%], in speedup terms t0 / t > 1 / 0.95.
bool beats_by_5_percent(double speedup_over_bar) {
  return speedup_over_bar * 0.95 > 1.0;
}

double binary_compile(const RewardComponents& c, const RewardContext&) {
  return c.compile;
}

double compile_correct(const RewardComponents& c, const RewardContext&) {
  if (c.compile == 0) return -1;
  return c.correct;
}

double kevin(const RewardComponents& c, const RewardContext&) {
  return c.correct * (0.3 + speed(c));
}

double kernelbench_tinker(const RewardComponents& c, const RewardContext&) {
  return c.correct * (0.3 + std::min(speed(c), 10.0));
}

double cuda_agent(const RewardComponents& c, const RewardContext& ctx) {
  if (c.correct == 0) return -1;
  const bool eager = beats_by_5_percent(speed(c));
  const bool optimized = ctx.optimized_speedup && beats_by_5_percent(speed(c) / *ctx.optimized_speedup);
  if (eager && optimized) return 3;
  return eager ? 2 : 1;
}

double drkernel(const RewardComponents& c, const RewardContext&) {
  return c.correct * (0.5 + 0.5 * std::min(speed(c), 3.0) + 0.5 * c.coverage);
}

double tritonforge(const RewardComponents& c, const RewardContext&) {
  return 0.1 * c.compile + c.correct * (0.3 + std::clamp(speed(c) - 1.0, 0.0, 10.0));
}

// Ours (docs/rl.md "Presets"): correctness gates everything (no credit for compiling: that is the
// reward the paper found teaches nothing, and it pays a hack what it pays an honest attempt), then
// speed on a log scale (speedups multiply; clamped so a cost-model outlier cannot dominate a
// group) and the share of the roofline reached (signal where the eager baseline is already near
// the bound). A correct kernel earns at least 0.5, whatever its speed.
double nki(const RewardComponents& c, const RewardContext&) {
  if (c.correct == 0) return 0;
  const double log_speed = c.speedup && *c.speedup > 0 ? std::clamp(std::log2(*c.speedup), -1.0, 2.0) : 0.0;
  return 1.0 + 0.5 * log_speed + 0.5 * std::clamp(c.coverage, 0.0, 1.0);
}

constexpr RewardPreset kPresets[] = {
    {"binary_compile", "compile", 0, std::nullopt, false, binary_compile},
    {"compile_correct", "-1 not compiled, 0 compiled, 1 correct", -1, std::nullopt, true, compile_correct},
    {"kevin", "correct * (0.3 + speedup); turns: sum gamma^t S_t, gamma 0.4", 0, 0.4, true, kevin},
    {"kernelbench_tinker", "correct * (0.3 + min(speedup, 10)); turns: sum gamma^t S_t, gamma 0.4", 0, 0.4, true,
     kernelbench_tinker},
    {"cuda_agent", "-1 incorrect; 1 correct; 2 > 5% over eager; 3 > 5% over eager and the task's optimised speedup", -1,
     std::nullopt, true, cuda_agent},
    {"drkernel", "correct * (0.5 + 0.5 min(speedup, 3) + 0.5 coverage)", 0, std::nullopt, true, drkernel},
    {"tritonforge", "0.1 compile + correct * (0.3 + clamp(speedup - 1, 0, 10))", 0, std::nullopt, true, tritonforge},
    {"nki", "correct * (1 + 0.5 clamp(log2 speedup, -1, 2) + 0.5 coverage)", 0, std::nullopt, true, nki},
};

}  // namespace

std::span<const RewardPreset> reward_presets() {
  return kPresets;
}

const RewardPreset* find_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return &p;
  return nullptr;
}

double preset_score(const RewardPreset& p, const RewardComponents& c, const RewardContext& ctx, bool flagged) {
  if (flagged && p.sees_flags) return p.floor;
  if (c.format == 0) return p.floor;
  return p.score(c, ctx);
}

double trajectory_score(const RewardPreset& p, const std::vector<double>& turn_scores, std::optional<double> gamma) {
  if (turn_scores.empty()) return p.floor;
  const std::optional<double> g = gamma ? gamma : p.gamma;
  if (!g) return turn_scores.back();
  double sum = 0, w = 1;
  for (double s : turn_scores) {
    sum += w * s;
    w *= *g;
  }
  return sum;
}

}  // namespace nki_agent
