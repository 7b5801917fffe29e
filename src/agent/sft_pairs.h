// agent/sft_pairs.h — (task, verified kernel) pairs as supervised fine-tuning records.
//
// A pair is a task and a kernel that passed its verification: a passing row of a bench results
// database (an agent's best kernel, or a task's baseline in a run without a model). Its record has
// the shape of agent/sft.h's, as a single-shot conversation — the single-shot system prompt, the
// task prompt, and the kernel as the model's answer in one fenced block — and no tools:
//   {"messages": [system, user, assistant], "tools": [],
//    "metadata": {task, level, source: "pair", run, model, prompt_version, dialect, sample, speedup}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "tasks/task.h"

namespace nki_agent {

// The record of one pair. `dialect` is the kernel's (sft_kernel_dialect); the task must accept it.
// Codes: those of build_prompt.
Result<nlohmann::json> pair_to_sft(const Task& task, const std::string& kernel, const std::string& dialect,
                                   const std::string& prompt_version, nlohmann::json metadata);

// "legacy" when the kernel imports neuronxcc (the legacy dialect's package), else "current".
std::string sft_kernel_dialect(const std::string& kernel);

struct SftPairs {
  std::vector<nlohmann::json> records;
  std::vector<std::string> notes;  // rows left out, and why
};

// The pairs of every passing row of the runs in `db_path` (only `run_id`'s when given). Tasks are
// found under `tasks_root`, else under each run's own task root. Codes: nkia_bad_argument (not a
// results database), nkia_store_io.
Result<SftPairs> sft_pairs_from_results(const std::string& db_path, const std::string& run_id,
                                        const std::string& tasks_root);

}  // namespace nki_agent
