// agent/sft.h — agent trajectories (agent/trajectory.h) as supervised fine-tuning records.
//
// One record per trajectory, in the chat format SFT trainers read (the OpenAI messages schema):
//   {"messages": [system, user, assistant (text + tool_calls), tool (tool_call_id, content), ...,
//                 user (feedback the loop added), ...],
//    "tools": [{"type": "function", "function": {name, description, parameters}}, ...],
//    "metadata": {task, level, model(s), prompt_version, dialect, seed, simulator_version, status,
//                 passed, speedup, turns, run}}
// The messages are exactly what the model was sent and what it answered, in order; tool results
// are the text the model read. A trajectory that ended early (a killed run) has no "end" event and
// is skipped with a note, as is one whose model call failed before any reply.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct SftOptions {
  bool passed_only = false;  // keep only trajectories whose kernel passed
  // Cut the conversation after the turn that first passed (drops the optimisation turns).
  bool stop_at_first_pass = false;
  // For results databases among the inputs (agent/sft_pairs.h): only this run's rows (empty:
  // every run's), and where their tasks are (empty: each run's own task root).
  std::string run_id;
  std::string tasks_root;
};

// Code nkia_sft_trajectory: the events are not one complete trajectory (the message says why).
Result<nlohmann::json> trajectory_to_sft(const std::vector<nlohmann::json>& events, const SftOptions& options);

struct SftExportStats {
  int files = 0, trajectories = 0, pairs = 0, written = 0, skipped = 0;
  int duplicates = 0;              // records already in `out` (or twice in the inputs): not written again
  std::vector<std::string> notes;  // why each skipped one was skipped
};

// Reads every *.jsonl under `inputs` (files or folders, recursively), one trajectory per file,
// and every results database (*.sqlite: its passing rows as (task, kernel) pairs,
// agent/sft_pairs.h), and appends one record per line to `out`. A record whose conversation
// (messages and tools) is already in `out` or was just written is left out: exporting the same
// runs twice adds nothing. Codes: nkia_sft_io, those of sft_pairs_from_results.
Result<SftExportStats> export_sft(const std::vector<std::string>& inputs, const std::string& out,
                                  const SftOptions& options);

}  // namespace nki_agent
