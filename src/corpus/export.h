// corpus/export.h — a generated corpus as the datasets RL and SFT frameworks load
// (../shared/docs/RL-CONVENTIONS.md), one JSON object per line, each row's prompt built by the
// agent's prompt templates (agent/prompts.h) from the task folder:
//   verl       data_source, prompt (chat messages), ability, reward_model {style: "rule",
//              ground_truth: task id}, extra_info {split, index, task_id, level, tools_kwargs},
//              agent_name "tool_agent" (with tools); verl's RL loader reads JSON lines from a
//              file named .json
//   trl        prompt (messages), task_id, level, split
//   openrlhf   input (messages) and label (the task id) — --data.input_key input
//              --data.label_key label with the remote reward flow
//   kernelbench  KernelBench's Hugging Face layout: code (task.py), level, name, problem_id; the
//              problem ids count from 1 within each level, the name is `<problem_id>_<id>_<name>.py`
//              and the rows come level by level (one level is one of KernelBench's splits)
//
// The folder is a corpus (its corpus.jsonl gives the tasks, in order, and their train/validation
// split) or any task root without one, e.g. tasks/nkibench: every task folder under it, sorted by
// path, in the "test" split.
#pragma once

#include <cstdint>
#include <string>

#include "core/diagnostic.h"

namespace nki_agent::corpus {

struct ExportOptions {
  std::string format;  // verl, trl, openrlhf, kernelbench
  std::string split;   // empty: every task; else only "train", "validation" or "test" (a task root)
  bool tools = true;   // the multi-turn system prompt with tools (false: single shot)
  std::string prompt_version = "v1";
};

// The formats, for messages.
const char* export_formats();

// The rows as JSON lines. Codes: nkia_bad_argument (unknown format), nkia_task_not_found (no
// manifest and no task folder), nkia_task_invalid (a manifest line), those of find_task_dirs, of
// load_task and of build_prompt.
Result<std::string> export_corpus(const std::string& dir, const ExportOptions& options, int64_t& rows);

}  // namespace nki_agent::corpus
