// tasks/verify.h — is a candidate kernel correct for a task, and how fast is it?
//
// The pipeline (docs/tasks.md has the reasons for each step):
//   1. static policy over the candidate's syntax tree (tasks/static_policy.h);
//   2. cases: seeds (default 5, from seed_base) x shape sets (the prompt's, then each variant's);
//      seed number i draws its inputs in profile i mod |profiles| (tasks/inputs.h); a shape set
//      too large to compute (max_compute_bytes) is one timing-only case instead, and a task with
//      no computable shape set cannot be verified (nkia_task_too_large);
//   3. per case: the parameters for the seed (reference worker or cache), the candidate in the
//      kernel sandbox (KernelService) — always BEFORE the reference output of that case is
//      computed or read — then the reference outputs (cache, else the reference worker), then the
//      comparison: output count, shapes, dtypes, then compare_output (tasks/compare.h);
//      the prompt's first case runs alone, the others in parallel, small cases several to a
//      kernel process (KernelService::run_each: a process's start and first calls paid once);
//      after a failure no later case starts (earlier ones finish), so the failure reported is
//      always the first in case order;
//   4. speed (tasks/speed.h), for a passing candidate, when a SpeedModel is given: measured beside
//      the cases once the first case passed.
// A failure of the candidate is a VerifyResult with passed = false, the failed check's name and a
// message; a Result error means the verification itself could not be done (the task is broken,
// the reference worker is missing) and is never the candidate's fault.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "runtime/kernel_call.h"
#include "runtime/kernel_service.h"
#include "tasks/compare.h"
#include "tasks/reference.h"
#include "tasks/speed.h"
#include "tasks/static_policy.h"
#include "tasks/task.h"

namespace nki_agent {

// The largest inputs of a shape set that a verification computes, in bytes: they reach the kernel
// worker as shared memory (runtime/shared_memory.h), so what bounds them is the memory of a
// verification (the inputs, the reference's copy and the simulator's working set stay under
// 8 GiB) and the simulator's time.
inline constexpr int64_t kDefaultMaxComputeBytes = int64_t{2} << 30;
// The largest outputs: they come back through the worker's reply (256 MiB at most).
inline constexpr int64_t kDefaultMaxComputeOutputBytes = int64_t{192} << 20;

struct VerifyOptions {
  int seeds = 0;                                  // 0: the task's [verify] seeds (default 5)
  uint64_t seed_base = 0;                         // seeds are seed_base, seed_base + 1, ...
  std::vector<std::string> shape_sets;            // names to run ("prompt", variant names); empty: all
  int parallel = 0;                               // kernel processes in flight at once; 0: the service's workers
  double kernel_seconds = kDefaultKernelSeconds;  // per case, also when cases share a process
  int64_t kernel_memory_mib = kDefaultKernelMemoryMiB;
  bool static_policy = true;
  bool fail_fast = true;  // stop starting cases after the first failure
  // A shape set whose inputs or outputs exceed these many bytes is run timing-only (every check of
  // the simulator, no numerics: compile errors, bounds, output shapes and dtypes), once.
  int64_t max_compute_bytes = kDefaultMaxComputeBytes;
  int64_t max_compute_output_bytes = kDefaultMaxComputeOutputBytes;
  ReferenceOptions reference;
  PolicyOptions policy;  // forbidden_dtypes are filled from the task
  SpeedModel speed;      // empty: speed not available
};

struct CaseResult {
  int index = 0;          // in case order
  std::string shape_set;  // "prompt" or a variant name
  uint64_t seed = 0;
  std::string profile;
  bool timing_only = false;  // the shapes are too large to compute: checked without numerics
  bool ran = false;          // false: skipped after an earlier failure
  bool passed = false;
  std::string check;  // the failed check; empty when passed or not run
  std::string message;
  std::optional<Diagnostic> kernel_error;  // the sandbox's Diagnostic when the kernel failed
  std::vector<OutputCheck> outputs;
  std::vector<std::string> notes;  // e.g. "output 0: reference below tolerance"
  double kernel_seconds = 0;       // its run's wall time (a share when cases shared a process); not a speed figure

  nlohmann::json to_json() const;
};

struct VerifyResult {
  std::string task;    // id_name
  std::string kernel;  // the candidate's main file
  bool passed = false;
  // The first failed check's name (tasks/verify_check.h: static_policy, kernel_error, output_count,
  // ...). Empty: passed.
  std::string check;
  std::string message;                   // one paragraph a model can act on
  std::optional<Diagnostic> diagnostic;  // the same failure as a Diagnostic (with file:line when known)
  std::vector<PolicyViolation> violations;
  std::vector<CaseResult> cases;
  int cases_total = 0, cases_run = 0, cases_passed = 0;
  SpeedResult speed;
  ReferenceStats reference;
  // The simulator's warnings of the candidate's prompt-shape run (first seed), one line each:
  // "file:line: warning[code]: message (hint: ...)".
  std::vector<std::string> warnings;
  double seconds = 0;  // wall time of the whole verification (of the lookup, when from the result cache)
  // Answered from the result cache (tasks/verify_cache.h) instead of being run; verified_seconds is
  // how long the stored verification took.
  bool from_result_cache = false;
  double verified_seconds = 0;

  nlohmann::json to_json() const;
  std::string format() const;  // the human summary nki-agent verify prints
};

// Verifies `candidate` (its files, as load_kernel_files read them) against `task`.
Result<VerifyResult> verify_kernel(const Task& task, const KernelFiles& candidate, KernelService& service,
                                   const VerifyOptions& options);

// The kernel arguments of one case in task order (inputs drawn, parameters from `params`), and the
// reference-side inputs (the kind = "input" ones). Shared with the task checks.
struct CaseInputs {
  std::vector<Tensor> kernel_args;
  std::vector<std::string> names;
  std::vector<Tensor> forward_inputs;
};
CaseInputs make_case_inputs(const Task& task, const ShapeSet& set, uint64_t seed, InputProfile profile,
                            const std::vector<Tensor>& params);

}  // namespace nki_agent
