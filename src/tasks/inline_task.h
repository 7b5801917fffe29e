// tasks/inline_task.h — a task made from a reference a client sent (KernelBench form), not one of
// the task roots'.
//
// RL clients in the KernelBench tradition (KernelGYM's /evaluate, Kernel-Smith's verl rows) send
// the PyTorch reference with every request: `class Model(nn.Module)`, `get_inputs()` and
// `get_init_inputs()`. make_inline_task() turns one into an ordinary task folder, so that it is
// verified exactly as NKIBench's tasks are:
//   1. the code is inspected by the reference worker in confined mode (tasks/reference.h: it runs
//      only in forked children under a seccomp filter, with no file, socket, process or exec, and
//      nothing of the host's environment), which reports get_inputs()' dtypes, shapes and value
//      ranges, the state_dict, and the forward's outputs — names, dtypes and shapes only, each
//      checked before it is used;
//   2. task.toml is written from those facts alone: the inputs (in0, in1, ... in get_inputs()
//      order, integer inputs drawn in the range get_inputs() drew them from, non-negative float
//      inputs kept non-negative), every state_dict entry as a parameter, the outputs, the
//      tolerance asked for or the dtype's default, `untrusted_reference = true` (so every later
//      run of the reference is confined too) and no baseline (no speed figure);
//   3. the folder is <root>/inline_<first 16 hex of the key>, published by rename, and found again
//      by the key: the SHA-256 of the code, the entry point, the kernel's entry, the tolerance and
//      the target. The same reference costs one inspection per root.
// Nothing the client sent is written into task.toml: names are ours or checked identifiers,
// numbers are formatted by us.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/diagnostic.h"
#include "tasks/reference.h"
#include "tasks/task.h"

namespace nki_agent {

struct InlineReference {
  std::string code;                     // Model, get_inputs, get_init_inputs
  std::string entry_point = "Model";    // the reference's class (KernelGYM's entry_point)
  std::string kernel_entry = "kernel";  // the function the candidate kernel defines
  std::optional<double> atol, rtol;     // for every output; default: the dtype's
  std::string target = "trn1";
};

inline constexpr size_t kMaxInlineReferenceBytes = size_t{256} << 10;

struct InlineTaskOptions {
  std::string root;              // where inline tasks are kept; empty: default_inline_task_root()
  ReferenceOptions reference;    // the worker's interpreter, limits (its cache is not used here)
  double inspect_seconds = 120;  // the inspection (import, Model(), get_inputs(), one forward)
  int64_t max_tensor_elements = int64_t{1} << 26;
  int64_t max_total_bytes = int64_t{1} << 30;  // inputs, parameters and outputs together
};

// $TMPDIR (else /tmp) / nki-agent-inline-tasks-<uid>.
std::string default_inline_task_root();

// The key an inline reference is kept under (hex SHA-256).
std::string inline_reference_key(const InlineReference& ref);

// The task of `ref`, made or found again. Codes: nkia_inline_reference (malformed: empty or too
// long code, an entry that is not an identifier, a tolerance outside [0, 1]; or a reference whose
// inputs, parameters or outputs a task cannot hold: not tensors, an element type, names, sizes),
// nkia_reference_failed (the code raised, or the worker refused what it did: the message says
// which), nkia_helper_* (the worker could not run), nkia_task_invalid (what was written does not
// read back: never expected).
Result<Task> make_inline_task(const InlineReference& ref, const InlineTaskOptions& options);

}  // namespace nki_agent
