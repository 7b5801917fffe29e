// agent/loop.h — the agent on one task: a model writes an NKI kernel and fixes it with the tools
// until it verifies, then (optionally) makes it faster.
//
// Turns are model calls. Each turn the model gets the conversation and the tools (agent/tools.h);
// every tool call it makes is run and answered before the next turn. The loop stops when:
//   - a kernel passes verify (or submit) and no optimisation turns are asked for;
//   - after the first pass, `optimize_turns` more turns have run (the model is told its speedup
//     and asked to use profile), or it submits a passing kernel;
//   - `max_turns` turns ran without a pass;
//   - the model refuses (status "refused");
//   - a model call fails (the endpoint still failing after its retries, its deadline, a request it
//     turns away, a cancellation) or the run is cancelled: status "interrupted", whatever was
//     reached before (passed, compiled, the best kernel, the trajectory) is kept. An interrupted
//     run is not a result of the task: `bench` stores it as such and `--resume` runs it again.
// A reply without a tool call that contains a kernel is verified as if submitted; one without a
// kernel gets a reminder to use the tools. The best kernel is the fastest one that passed, else
// the last one that compiled, else the last one written.
// Single-shot mode (the ablation): one model call without tools; its last python block is verified.
// The router: with a `stronger` client, the loop switches to it after `escalate_after` turns on
// the first model that ended without a pass.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/llm.h"
#include "agent/prompts.h"
#include "agent/tools.h"
#include "agent/trajectory.h"
#include "tasks/task.h"

namespace nki_agent {

struct SolveOptions {
  int max_turns = 10;
  int optimize_turns = 0;
  bool single_shot = false;
  PromptOptions prompt;    // version, dialect (tools is set from single_shot)
  int escalate_after = 0;  // 0: never escalate
  uint64_t seed = 0;       // recorded, and sent to servers that take one
  std::string run_id;      // names the run in trajectory lines
};

// The status of a run that is not a result of its task (see above).
inline constexpr std::string_view kStatusInterrupted = "interrupted";

struct SolveResult {
  std::string task;               // id_name
  std::string status = "failed";  // "passed", "compiled", "failed", "refused", "interrupted"
  bool compiled = false;
  bool passed = false;
  std::string kernel;       // the best kernel (see above)
  std::string last_kernel;  // the last kernel written
  // Why the run ended (agent/store.h's kOutcome*): passed; failed_check / compile_error (the last
  // kernel verified failed a check / did not compile; a kernel that compiled but was never verified
  // is failed_check "not_verified"); budget_exhausted (the turns ran out and no kernel was written);
  // refused; endpoint_failure (a model call failed for good); interrupted (a stop).
  std::string outcome;
  std::string check;                   // the last failed check when not passed (tasks/verify_check.h names)
  std::string code;                    // the Diagnostic code of that failure, or of the model call's
  std::optional<VerifyResult> verify;  // the best passing kernel's verification, when it had one
  double speedup = 0;                  // of the best passing kernel (0: none passed or not measured)
  int turns = 0, tool_calls = 0;
  int first_pass_turn = 0;  // 0: never passed
  Usage usage;
  double cost_usd = 0;
  double seconds = 0, model_seconds = 0, tool_seconds = 0;
  std::vector<std::string> models;  // the models used, in order
  std::string error;                // why the run ended early, when it did
  std::string prompt_version;

  nlohmann::json to_json() const;  // without the VerifyResult's cases (summary only)
};

struct SolveHooks {
  std::function<void(const std::string& line)> progress;  // one line per event, for the terminal
  TrajectoryWriter* trajectory = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  TextSink on_text;  // streamed model text
};

// Codes: nkia_prompt_version, nkia_prompt_dialect (the prompt cannot be built). Everything that
// happens during the run, model failures included, is in the SolveResult.
Result<SolveResult> solve_task(const Task& task, AgentTools& tools, LlmClient& model, LlmClient* stronger,
                               const SolveOptions& options, const SolveHooks& hooks = {});

}  // namespace nki_agent
