// reward/score_types.h — what a reward request asks and what it gets back (docs/serve.md has the
// same fields on the wire).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "reward/extract.h"
#include "reward/presets.h"
#include "tasks/inline_task.h"

namespace nki_agent {

struct RewardRequest {
  std::string task_id;
  Submission submission;
  std::string preset = std::string(kDefaultPreset);  // the one `score` is
  std::vector<std::string> presets;                  // reported in `scores`; empty: all
  bool all_turns = false;                            // score every kernel of the response; `score` is the trajectory's
  std::optional<double> gamma;
  int seeds = 0;  // 0: the task's
  bool speed = true;
  // The client's own reference (KernelBench form) instead of a task of the roots: the task is made
  // from it (tasks/inline_task.h) and task_id is only the client's label.
  std::optional<InlineReference> inline_reference;
};

// One kernel, scored (cached as a whole).
struct KernelScore {
  bool scored = false;  // false: the verification could not be done (`error` says why)
  RewardComponents components;
  std::vector<std::string> flags;
  nlohmann::json verify;  // passed, check, message, cases_run, cases_total, diagnostic, speed
  std::optional<Diagnostic> error;
  double verify_seconds = 0;
  bool cached = false;
  std::map<std::string, double> scores;  // per preset, filled per request (not cached)
  nlohmann::json to_json() const;        // components, flags, verify, scores
};

struct RewardResult {
  std::string status;  // "ok", "format_error", "error"
  std::optional<double> score;
  std::string preset;
  std::map<std::string, double> scores;
  RewardComponents components;  // of the answer (the last kernel)
  std::vector<std::string> flags;
  nlohmann::json verify;
  std::vector<KernelScore> turns;  // every kernel scored, in order
  std::optional<Diagnostic> error;
  bool cached = false;  // every kernel came from the result cache
  double total_seconds = 0, verify_seconds = 0, queue_seconds = 0;
  std::string extracted_from;  // "response", "kernel_code", "tool_call"

  nlohmann::json to_json() const;
  // The result of a request that could not be scored at all (malformed, unknown task), in the same
  // shape: status "error", no score.
  static RewardResult failure(Diagnostic error);
};

nlohmann::json components_to_json(const RewardComponents& c);

}  // namespace nki_agent
