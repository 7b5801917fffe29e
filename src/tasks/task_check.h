// tasks/task_check.h — is a task itself sound? (`nki-agent tasks check`, and the test over every
// task under tasks/nkibench).
//
// A task can be broken in ways that make every verdict on it worthless: a toml that disagrees
// with task.py, a learned weight that never reaches the kernel, a reference that changes between
// runs or whose output is degenerate (zeros, a constant, below the tolerance, independent of the
// inputs), or a baseline that does not pass its own task. The checks:
//   contract       task.toml against task.py: get_inputs() (count, dtypes, shapes), every
//                  nn.Parameter declared as a param arg, forward's outputs on get_inputs()
//   baseline       baseline.py passes verify_kernel on every seed and every shape set
//   deterministic  the prompt's reference at the first seed, recomputed in a fresh worker without
//                  the cache, equals the first result bit for bit
//   degenerate     no reference output at the first seed (every shape set) is degenerate
//                  (compare.h: degenerate_reference), and the outputs change with the seed
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "runtime/kernel_service.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {

struct TaskCheckOptions {
  VerifyOptions verify;  // for the baseline run (and its reference options)
  bool contract = true;
  bool baseline = true;
  bool determinism = true;
  bool degenerate = true;
};

struct TaskProblem {
  std::string check;  // contract, baseline, deterministic, degenerate, reference
  std::string message;
};

struct TaskCheckResult {
  std::string task;
  bool passed = false;
  std::vector<TaskProblem> problems;
  std::vector<std::string> warnings;  // the task's own (unknown keys, ...)
  std::optional<VerifyResult> baseline;
  double seconds = 0;

  nlohmann::json to_json() const;
  std::string format() const;
};

// Problems of the task are in the result; a Result error means the checks could not run at all.
Result<TaskCheckResult> check_task(const Task& task, KernelService& service, const TaskCheckOptions& options);

}  // namespace nki_agent
