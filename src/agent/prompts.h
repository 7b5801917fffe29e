// agent/prompts.h — the prompts the agent gives a model, built from versioned text files.
//
// The text lives in prompts/<version>/*.md (compiled in, agent/embedded_text.h); prompts/README.md
// states the versioning rule: a released version's text never changes — a change makes a new
// version folder — and every result and trajectory records the version it used.
//
// Files of a version:
//   system_tools.md        system prompt of the multi-turn loop with tools
//   system_single_shot.md  system prompt of one generation without tools
//   task.md                the task (user) prompt
//   rank_aware.md          fragments of the rank-aware section (one per rank and situation)
//   common.md              fragments both system prompts share (programming model, rules)
//   dialect_legacy.md / dialect_current.md
//                          the dialect's imports, idioms and a complete example kernel
// A fragment file holds `<!-- fragment: name -->` markers; each fragment runs to the next marker.
// `{{name}}` placeholders are replaced from the task and the options; HTML comments (`<!-- ... -->`)
// are notes for maintainers and tests and never reach the model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "tasks/task.h"

namespace nki_agent {

struct PromptOptions {
  std::string version = "v1";
  std::string dialect = "legacy";  // "legacy" or "current"; must be one the task accepts
  bool tools = true;               // false: the single-shot system prompt (one fenced kernel, no tools)
  int max_turns = 10;
};

struct Prompt {
  std::string version;
  std::string system;
  std::string user;
};

// The system and task prompts for `task`. Codes: nkia_prompt_version (no such version),
// nkia_prompt_dialect (a dialect nki-agent does not know, or one the task does not accept).
Result<Prompt> build_prompt(const Task& task, const PromptOptions& opt);

// The rank-aware section for the task's actual shapes: every argument and output with its shape,
// dtype and rank, the layout guidance for the ranks present, dimensions past 128 / 512, ragged
// dimensions and the variant shapes the verifier also runs.
std::string rank_section(const Task& task);

// The versions compiled in ("v1", ...), sorted.
std::vector<std::string> prompt_versions();

// The raw text of prompts/<version>/<file> ("system_tools.md"), empty when there is none.
std::string prompt_text(std::string_view version, std::string_view file);

}  // namespace nki_agent
