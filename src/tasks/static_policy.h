// tasks/static_policy.h — rules a candidate kernel's source must meet before it is run.
//
// The checks are over Python's own syntax tree (ast.parse in tasks/py/static_policy.py, run by
// Debian's python3.11 in a separate process under rlimits and a deadline: the source is parsed,
// never executed). Only the files the kernel can reach by import from its main file are checked;
// code under `if __name__ == "__main__":` never runs in a kernel call and is skipped. The rules
// and why each exists are in docs/tasks.md; the sandbox enforces the hard limits regardless — this
// names the problem at its line, in words a model can act on.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "runtime/kernel_call.h"
#include "tensor/dtype.h"

namespace nki_agent {

struct PolicyViolation {
  std::string rule;  // syntax, reference_framework, reference_access, system_access, introspection,
                     // host_math, precision_drop
  std::string message;
  std::string file;  // relative to the kernel's root
  int line = 0;
  int col = 0;
  std::string hint;

  Diagnostic to_diagnostic(const std::string& root) const;  // code nkia_policy_<rule>
};

struct PolicyOptions {
  std::string python;                   // empty: tasks/helpers.h's choice
  double seconds = 30;                  // parsing is milliseconds; a pathological file gets this long
  std::vector<DType> forbidden_dtypes;  // Task::forbidden_dtypes()
};

// Top-level modules a candidate may import under verification: pure computation. Every one is loaded
// in the kernel sandbox (runtime/python/pylib/_nkia/policy.py's OURS and PRELOADED; a test checks).
const std::vector<std::string>& policy_allowed_imports();

// The violations (empty: the source passes). Codes of the Result's own failure: nkia_helper_* when
// the checker could not run.
Result<std::vector<PolicyViolation>> check_static_policy(const KernelFiles& files, const PolicyOptions& options);

}  // namespace nki_agent
