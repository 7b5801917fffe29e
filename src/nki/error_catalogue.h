// nki/error_catalogue.h — every code a Diagnostic can carry: what it means and how to fix it.
//
// One table is the single source of truth for these codes, written in parts (nki/error_table.h:
// one file per group of origins) and merged here. Kernel errors are made with nki_error(), which
// takes the hint and severity from the table (a call may give a more precise hint); `nki-agent
// errors` prints the table; docs/errors.md is its generated Markdown form (`nki-agent errors
// --markdown`); the agent's lookup tool reads its kernel-facing part (error_origin_reaches_kernel).
// tests/unit/test_error_registry.cpp scans the sources: every code literal is registered, and every
// registered code is raised somewhere or says why not (ErrorInfo::not_raised).
//
// Origins (ErrorOrigin), the first three being the kernel codes proper:
//   kCatalogue   the NKI compiler's own codes (`err_*`, nki-spec §5.1): the 36 codes of SDK 2.21–2.26
//                plus err_read_modify_write_on_kernel_parameter, which existed only in SDK 2.20.
//   kConstraint  our `nkia_*` codes for the hardware and language rules of nki-spec §5.3 that no
//                catalogue code covers. Where a catalogue code fits, the rule uses it instead:
//                  an operand in the wrong memory                 → err_unsupported_memory
//                  more than 128 partitions (incl. matmul K)      → err_num_partition_exceed_arch_limit
//                  operands with different partition counts       → err_num_partition_mismatch
//                  a fixed upper limit on one axis or free size   → err_size_of_dimension_exceed_arch_limit
//                    (matmul stationary ≤128 / moving ≤512, transposes, bn_stats, max8, …; the message
//                    names the API and the limit)
//                  too many axes for an API or access pattern     → err_exceed_max_supported_dimension
//                  two affine_range iterations write one address  → err_unexpected_output_dependencies
//   kSimulator   `nkia_*` codes for what only executing the kernel reveals (uninitialised reads,
//                runtime index out of bounds, …). Most are warnings.
//   kRuntime     how the kernel's Python ran: syntax errors, exceptions, the entry and its inputs,
//                imports, and nkia_internal (a bug in nki-agent met while running a kernel).
//   kVerify      `verify`'s checks of a kernel's results (nkia_verify_<check>) and the static policy
//                (nkia_policy_<rule>).
//   kSandbox     the sandbox, its limits, and the workers that run kernels.
//   kTask        task folders, their references and the reference cache.
//   kTool        the command-line tools: arguments, .npy files, hardware and trace files.
//   kAgent       the agent: LLM endpoints, prompts, trajectories, the results store.
//
// Codes are stable: never rename or reuse one; add new ones in sorted order to the part of their
// origin (a static_assert per part enforces sorted, unique, well-formed, complete entries).
//
// This module holds no state and does no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnostic.h"

namespace nki_agent {

enum class ErrorOrigin : uint8_t {
  kCatalogue,
  kConstraint,
  kSimulator,
  kRuntime,
  kVerify,
  kSandbox,
  kTask,
  kTool,
  kAgent
};

// Every origin, in the order the table is rendered.
inline constexpr ErrorOrigin kErrorOrigins[] = {
    ErrorOrigin::kCatalogue, ErrorOrigin::kConstraint, ErrorOrigin::kSimulator,
    ErrorOrigin::kRuntime,   ErrorOrigin::kVerify,     ErrorOrigin::kSandbox,
    ErrorOrigin::kTask,      ErrorOrigin::kTool,       ErrorOrigin::kAgent};

// "catalogue", "constraint", "simulator", "runtime", "verify", "sandbox", "task", "tool", "agent".
std::string_view error_origin_name(ErrorOrigin o);
// The heading of the origin's group in listings and docs/errors.md, e.g. "NKI compiler catalogue".
std::string_view error_origin_heading(ErrorOrigin o);
// The origin of that name, or nullopt.
std::optional<ErrorOrigin> error_origin_from_name(std::string_view name);

// The kernel codes proper (catalogue, constraint, simulator): the rules of NKI itself, the only
// entries with spec references and examples.
constexpr bool error_origin_is_kernel(ErrorOrigin o) {
  return o == ErrorOrigin::kCatalogue || o == ErrorOrigin::kConstraint || o == ErrorOrigin::kSimulator;
}
// Codes a kernel author (or the agent writing a kernel) meets about the kernel: the kernel codes,
// how its Python ran, verify's checks and the sandbox's limits. The agent's lookup tool documents these.
constexpr bool error_origin_reaches_kernel(ErrorOrigin o) {
  return error_origin_is_kernel(o) || o == ErrorOrigin::kRuntime || o == ErrorOrigin::kVerify ||
         o == ErrorOrigin::kSandbox;
}

struct ErrorInfo {
  std::string_view code = {};  // "err_…" (catalogue) or "nkia_…" (ours)
  ErrorOrigin origin = ErrorOrigin::kConstraint;
  Severity severity = Severity::kError;  // the default severity of a Diagnostic with this code
  std::string_view title = {};           // one line, no final period
  std::string_view meaning = {};         // 2–4 sentences in plain words
  std::string_view hint = {};            // what to change in the kernel, imperative
  std::string_view example_bad = {};     // a few lines of legacy-dialect NKI; may be empty
  std::string_view example_fix = {};     // the same lines, fixed; empty iff example_bad is
  std::string_view note = {};            // versions, targets, older names; may be empty
  std::string_view spec = {};            // where nki-spec.md states it, e.g. "§5.1 #23; §2.3 TC#1";
                                         // required for kernel codes, may be empty for the others
  std::string_view not_raised = {};      // non-empty: nothing raises the code yet, and this says why
};

// The whole table (every part), sorted by code.
std::span<const ErrorInfo> error_catalogue();

// The entry for a code, or nullptr when there is none.
const ErrorInfo* find_error(std::string_view code);

// Up to max_results codes that look like `query` (case-insensitive): codes containing it first, then
// the nearest by edit distance; nothing when no code is close. For "did you mean" hints.
std::vector<std::string_view> similar_error_codes(std::string_view query, size_t max_results = 5);

// The one constructor of kernel Diagnostics: this code, the message, and the table's hint and
// severity; the three-argument form gives a hint of its own (more precise than the table's, e.g.
// naming the limit) instead. The code must be in the table: our own code writes the codes, so an
// unknown one is an InternalError.
Diagnostic nki_error(std::string_view code, std::string message);
Diagnostic nki_error(std::string_view code, std::string message, std::string hint);

// {"code", "origin", "severity", "title", "meaning", "hint"} plus "spec", "example_bad",
// "example_fix", "note" and "not_raised" when present.
nlohmann::json error_info_json(const ErrorInfo& e);

// One entry as a Markdown section ("### `code`" …), and the whole table as the docs page, one
// section per origin (docs/errors.md is exactly errors_markdown()).
std::string error_entry_markdown(const ErrorInfo& e);
std::string errors_markdown();

}  // namespace nki_agent
