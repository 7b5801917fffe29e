// reward/presets.h — the reward shapes an RL trainer can ask for, one table over one set of
// components.
//
// Every preset is a function of the same measured components (format, compile, correct, speedup,
// coverage) and of the task's own speed bar; docs/rl.md gives each formula with its source. A
// kernel carrying a zeroing flag (reward/flags.h) gets the preset's floor, except under
// `binary_compile`, which by definition sees only whether the kernel compiles. Multi-turn returns:
// a preset with a discount scores a trajectory as sum_t gamma^t S_t (Kevin's return of the first
// turn); one without scores its last kernel.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nki_agent {

// What one kernel earned, measured (reward/score.h fills it).
struct RewardComponents {
  double format = 0;              // 1: a kernel was found in the answer
  double compile = 0;             // 1: it traces without a Diagnostic at the task's prompt shapes
  double correct = 0;             // 1: it passed the full verification
  std::optional<double> speedup;  // baseline time / kernel time, when correct and measured
  double coverage = 0;            // the share of the task's roofline bound reached, in [0, 1]
};

// What a preset needs to know of the task.
struct RewardContext {
  // The speedup over the eager baseline that an optimised kernel of the task reaches (the lower end
  // of task.toml's [reference] expected_speedup); nullopt when the task gives none.
  std::optional<double> optimized_speedup;
};

struct RewardPreset {
  std::string_view name;
  std::string_view formula;     // one line, as docs/rl.md and `nki-agent reward --list` show it
  double floor;                 // the lowest score: what a flagged kernel gets
  std::optional<double> gamma;  // the default multi-turn discount; nullopt: the last kernel counts
  bool sees_flags;              // false: flags do not change the score (binary_compile)
  double (*score)(const RewardComponents& c, const RewardContext& ctx);
};

std::span<const RewardPreset> reward_presets();
// nullptr when no preset has that name.
const RewardPreset* find_preset(std::string_view name);
inline constexpr std::string_view kDefaultPreset = "nki";

// The preset's score of one kernel; `flagged`: the kernel carries a zeroing flag.
double preset_score(const RewardPreset& p, const RewardComponents& c, const RewardContext& ctx, bool flagged);
// The preset's score of a trajectory from its kernels' scores, in turn order (at least one):
// sum_t gamma^t S_t with `gamma` (else the preset's own), or the last score when neither gives one.
double trajectory_score(const RewardPreset& p, const std::vector<double>& turn_scores,
                        std::optional<double> gamma = std::nullopt);

}  // namespace nki_agent
