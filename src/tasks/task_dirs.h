// tasks/task_dirs.h — finding task folders: every one under a root, the default root, and the folder
// a task named on the command line is in. This file only looks at the file system; reading a
// task.toml is tasks/task.h's job (resolve_task_dir reads them only to match a task's id).
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

// Every task folder (one holding task.toml) under `root`, sorted by path; `root` itself counts.
Result<std::vector<std::string>> find_task_dirs(const std::string& root);

// Where `nki-agent tasks` looks when not told: $NKIA_TASKS, else ./tasks/nkibench, else ./tasks.
std::string default_task_root();
// A task named on the command line: a folder (or its task.toml), else a folder under `root` whose
// name is `spec` or starts with `spec` + "_" ("L1_014" finds L1_014_relu_fp32), else one whose
// task.toml has that id. Codes:
// nkia_task_not_found, nkia_task_ambiguous.
Result<std::string> resolve_task_dir(const std::string& spec, const std::string& root);

}  // namespace nki_agent
